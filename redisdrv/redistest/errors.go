package redistest

import (
	"errors"

	"github.com/kvshare/kvshare/loopback"
)

// Sentinels: every error the package returns wraps one of them, so callers
// branch with errors.Is and show the text, which names the binary, the
// process and the tail of its log.
var (
	// ErrNotAbsolute: the redis-server path is not absolute.
	ErrNotAbsolute = errors.New("redistest: redis-server path is not absolute")
	// ErrNoBinary: nothing is at the redis-server path, or it is a folder.
	ErrNoBinary = errors.New("redistest: no redis-server binary at the path")
	// ErrNotExecutable: the file at the path has no execute permission.
	ErrNotExecutable = errors.New("redistest: redis-server binary is not executable")
	// ErrVersion: `redis-server --version` failed, printed no version, or
	// printed a major version below MinMajor.
	ErrVersion = errors.New("redistest: redis-server version is not usable")
	// ErrOptions: an Options or ClusterOptions field, or an argument of a
	// Cluster call (a slot, a batch size), is out of range.
	ErrOptions = errors.New("redistest: bad options")
	// ErrNoCLI: there is no executable redis-cli next to the redis-server
	// binary, which StartCluster needs to create the cluster.
	ErrNoCLI = errors.New("redistest: no redis-cli next to redis-server")
	// ErrCluster: the cluster did not form, or is not in the state a call
	// needs or waits for (a slot no node owns, a move from the node the
	// slot is on, nodes that did not settle in time); the text says what
	// was seen.
	ErrCluster = errors.New("redistest: cluster not in the state needed")
	// ErrStopped: the server was stopped with Stop; it starts nothing any
	// more.
	ErrStopped = errors.New("redistest: server stopped")
	// ErrNotRunning: the call needs a running server process and there is
	// none (after Kill, or after it exited by itself).
	ErrNotRunning = errors.New("redistest: server is not running")
	// ErrState: the call does not fit the process's state (freezing a
	// frozen server, resuming one that is not frozen).
	ErrState = errors.New("redistest: wrong state for this call")
	// ErrNoPong: the server accepted connections but did not answer PING
	// with PONG within Options.StartTimeout.
	ErrNoPong = errors.New("redistest: server did not answer PING")
	// ErrProxyClosed: the proxy was closed.
	ErrProxyClosed = errors.New("redistest: proxy closed")
	// ErrNoPorts: no free loopback port could be found.
	ErrNoPorts = loopback.ErrNoPorts
	// ErrEarlyExit: the server exited before it accepted connections.
	ErrEarlyExit = loopback.ErrEarlyExit
	// ErrNotReady: the server is alive but did not accept connections
	// within Options.StartTimeout (or the context ended first).
	ErrNotReady = loopback.ErrNotReady
	// ErrStillRunning: the server survived SIGTERM and SIGKILL within the
	// bound; its PID is in the text.
	ErrStillRunning = loopback.ErrStillRunning
)
