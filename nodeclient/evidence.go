package nodeclient

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Evidence is what the client can prove about the node's process once
// the connection to it ended. A closed connection alone proves nothing:
// the node ends sessions itself while transfers on the engine's pages go
// on, and a node whose process lives can still be moving rows.
type Evidence uint8

const (
	// EvidenceUnknown: the node's exit is not proven (it may live on, or
	// the client has no pidfd of it). Keep the slots: attempts not
	// quiesced never quiesce, and lends stay mapped.
	EvidenceUnknown Evidence = iota
	// NodeExited: the node's process exited (its pidfd, taken at
	// connect, became readable): every thread of it left user space, so
	// nothing of it touches the lent pages any more. The slots are the
	// engine's again.
	NodeExited
)

func (e Evidence) String() string {
	if e == NodeExited {
		return "the node's process exited"
	}
	return "unknown: keep the slots"
}

// ErrNoEvidence: the client cannot see the node's process exit: the
// node's pid is not visible from this PID namespace, the socket's peer
// is not the process that says it is the node, the node runs in this
// very process, or the system has no pidfds. Memory lent to such a node
// is kept for good once the connection ends.
var ErrNoEvidence = errors.New("kvshare/nodeclient: the node's exit cannot be proven")

// NodeLostError is the error of every call and attempt the end of the
// connection cut off: Evidence says what the client could prove about
// the node's process when the error was made, and Err why the
// connection ended (it wraps [ErrClosed]). An attempt's forced outcome
// carries one as its fault; [Client.WaitNodeExit] says when the
// evidence becomes [NodeExited].
type NodeLostError struct {
	Evidence Evidence
	Err      error
}

func (e *NodeLostError) Error() string {
	return fmt.Sprintf("%v; evidence: %v", e.Err, e.Evidence)
}

func (e *NodeLostError) Unwrap() error { return e.Err }

// DefaultExitGrace is how long, when the connection ends without the
// node's goodbye, the client waits for the node's process to exit
// before it forces the outcomes still open (Options.ExitGrace 0). A
// crashing process closes its sockets a moment before its exit is
// visible on its pidfd.
const DefaultExitGrace = 100 * time.Millisecond

// Watch says how the client watches the node's process: PID as this
// process sees it (0 if unknown), and Via how its pidfd was taken
// ("SO_PEERPIDFD", "pidfd_open of the SO_PEERCRED pid") or why there is
// none ("no pidfd: …"). Proves is false in the second case: the node's
// exit can never be proven, and its lends are kept for good once the
// connection ends.
type Watch struct {
	PID    int
	Via    string
	Proves bool
}

// Watch returns how the client watches the node's process.
func (c *Client) Watch() Watch {
	w := c.watcher()
	return Watch{PID: w.pid, Via: w.via, Proves: w.proves()}
}

// watcher returns the watch of the node's process.
func (c *Client) watcher() *watch {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.watch
}

// Evidence says, without waiting, what the client can prove about the
// node's process now: NodeExited once it exited, else EvidenceUnknown.
func (c *Client) Evidence() Evidence {
	if c.exitProven() || c.watcher().exitedWithin(0) {
		c.proven()
		return NodeExited
	}
	return EvidenceUnknown
}

// WaitNodeExit waits within ctx for the node's process to exit and
// returns nil once it has: then every attempt the end of the connection
// cut off quiesces (its slots are the engine's again), and lends cut
// off may be returned ([Lend.Return] frees them). An error wraps
// [ErrNoEvidence] when the client cannot see the node's exit, else
// ctx's error. It may be called while the connection is open: it waits
// for the node to exit all the same.
func (c *Client) WaitNodeExit(ctx context.Context) error {
	if c.exitProven() {
		return nil
	}
	w := c.watcher()
	if err := w.wait(ctx); err != nil {
		return fmt.Errorf("kvshare/nodeclient: waiting for the exit of node pid %d: %w", w.pid, err)
	}
	c.proven()
	return nil
}

func (c *Client) exitProven() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exited
}

// proven applies the proof of the node's exit: every attempt cut off
// quiesces and every lend cut off that no caller holds is freed (those
// cut off later, once the proof is known, are at once).
// Lends a caller holds are freed by their Return: their slots may
// still be in the caller's hands.
func (c *Client) proven() {
	c.mu.Lock()
	c.exited = true
	cut, orphans := c.cutOff, c.orphans
	c.cutOff, c.orphans = nil, nil
	c.mu.Unlock()
	for _, a := range cut {
		a.quiesce()
	}
	for _, l := range orphans {
		if err := l.release(); err != nil {
			c.log.Warn("kvshare/nodeclient: freeing a lend cut off from a node that exited", "bytes", l.size, "err", err)
		}
	}
	c.watcher().close(true)
}

// lostError is the error the end of the connection gives every request
// still open: err with the evidence the client has. When the connection
// ended without the node's goodbye or the engine's Close (a crash looks
// so), it first waits up to the exit grace for the node's process to
// exit.
func (c *Client) lostError(err error, crashLike bool) *NodeLostError {
	ev := EvidenceUnknown
	if w := c.watcher(); w.proves() {
		ms := 0
		if crashLike && c.exitGrace > 0 {
			ms = int(c.exitGrace.Milliseconds())
		}
		if w.exitedWithin(ms) {
			ev = NodeExited
		}
	}
	return &NodeLostError{Evidence: ev, Err: err}
}
