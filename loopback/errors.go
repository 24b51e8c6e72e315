package loopback

import "errors"

// Sentinels: every error this package returns wraps one of them.
var (
	// ErrNoPorts: no free loopback port could be found in the allowed range.
	ErrNoPorts = errors.New("loopback: no free port")
	// ErrEarlyExit: a child exited before its sockets accepted.
	ErrEarlyExit = errors.New("loopback: process exited while starting")
	// ErrNotReady: a child is alive but its sockets did not accept in time
	// (or the context ended first).
	ErrNotReady = errors.New("loopback: process did not start listening in time")
	// ErrExited: a child that should be running has exited.
	ErrExited = errors.New("loopback: process exited")
	// ErrSignalState: after SIGSTOP or SIGCONT the kernel did not show the
	// child stopped or running within the bound.
	ErrSignalState = errors.New("loopback: process did not reach the signalled state")
	// ErrStillRunning: a child survived SIGTERM and SIGKILL within the
	// bound; its PID is in the text.
	ErrStillRunning = errors.New("loopback: process still running after SIGKILL")
)
