package loopback

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Process is one child a Launcher started: its name, PID, log and exit.
type Process struct {
	// Name is how errors and logs call the child.
	Name string
	// PID is the child's process ID.
	PID int
	// LogPath is the file the child's output goes to.
	LogPath string

	cmd    *exec.Cmd
	exited chan struct{} // closed once the child is reaped
	state  *os.ProcessState
}

// Exited is closed once the child has exited and been reaped.
func (pr *Process) Exited() <-chan struct{} { return pr.exited }

// Alive reports whether the child has not been reaped yet.
func (pr *Process) Alive() bool {
	select {
	case <-pr.exited:
		return false
	default:
		return true
	}
}

// State is the child's exit, nil while it runs.
func (pr *Process) State() *os.ProcessState {
	if pr.Alive() {
		return nil
	}
	return pr.state
}

// Signal sends sig to the child if it still runs (by its PID, through
// os.Process, which never signals a reused PID).
func (pr *Process) Signal(sig syscall.Signal) error {
	err := pr.cmd.Process.Signal(sig)
	if err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("loopback: %s (pid %d): %v: %w", pr.Name, pr.PID, sig, err)
	}
	return nil
}

// Stop sends SIGTERM (and SIGCONT, so a frozen child sees it), waits up
// to bound, then SIGKILLs and waits up to bound again.
func (pr *Process) Stop(log *slog.Logger, bound time.Duration) error {
	if !pr.Alive() {
		return nil
	}
	start := time.Now()
	_ = pr.Signal(syscall.SIGTERM)
	_ = pr.Signal(syscall.SIGCONT)
	if pr.WaitExit(bound) {
		log.Debug("loopback: stopped", "name", pr.Name, "pid", pr.PID, "after", time.Since(start).Round(time.Millisecond), "exit", pr.state.String())
		return nil
	}
	log.Warn("loopback: no exit after SIGTERM, sending SIGKILL", "name", pr.Name, "pid", pr.PID, "after", bound)
	return pr.Kill(bound)
}

// Kill SIGKILLs the child and waits up to bound for its exit.
func (pr *Process) Kill(bound time.Duration) error {
	_ = pr.Signal(syscall.SIGKILL)
	if pr.WaitExit(bound) {
		return nil
	}
	return fmt.Errorf("%w: %s pid %d", ErrStillRunning, pr.Name, pr.PID)
}

// WaitExit waits up to bound for the child to be reaped.
func (pr *Process) WaitExit(bound time.Duration) bool {
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-pr.exited:
		return true
	case <-t.C:
		return false
	}
}

// ExitError describes a child that has exited, wrapping sentinel, with
// the tail of its log.
func (pr *Process) ExitError(sentinel error) error {
	return fmt.Errorf("%w: %s pid %d: %s; log %s:\n%s", sentinel, pr.Name, pr.PID, pr.State(), pr.LogPath, LogTail(pr.LogPath))
}

// statePoll is how often Freeze and Resume look at the child's state.
const statePoll = 10 * time.Millisecond

// Freeze sends SIGSTOP and returns once the kernel shows the child
// stopped, within bound. A child that has exited is ErrExited.
func (pr *Process) Freeze(bound time.Duration) error {
	if !pr.Alive() {
		return pr.ExitError(ErrExited)
	}
	if err := pr.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	return pr.waitState(bound, func(s byte) bool { return s == 'T' }, "stopped")
}

// Resume sends SIGCONT and returns once the kernel shows the child
// running, within bound. A child that has exited is ErrExited.
func (pr *Process) Resume(bound time.Duration) error {
	if !pr.Alive() {
		return pr.ExitError(ErrExited)
	}
	if err := pr.Signal(syscall.SIGCONT); err != nil {
		return err
	}
	return pr.waitState(bound, func(s byte) bool { return s != 'T' }, "running")
}

// waitState polls the child's /proc state until ok, bounded by bound.
func (pr *Process) waitState(bound time.Duration, ok func(byte) bool, want string) error {
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
	tick := time.NewTicker(statePoll)
	defer tick.Stop()
	for {
		s := ProcState(pr.PID)
		if s == 0 || ok(s) { // 0: /proc cannot tell; the signal was sent
			return nil
		}
		select {
		case <-pr.exited:
			return pr.ExitError(ErrExited)
		case <-deadline.C:
			return fmt.Errorf("%w: %s pid %d not %s after %v (state %c)", ErrSignalState, pr.Name, pr.PID, want, bound, s)
		case <-tick.C:
		}
	}
}
