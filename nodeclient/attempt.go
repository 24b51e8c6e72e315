package nodeclient

import (
	"context"
	"fmt"
	"sync"

	"github.com/kvshare/kvshare/contract"
)

// Attempt is one publish or fetch the node accepted: a [contract.Attempt]
// whose outcome and quiescence come from the node. Its outcome is known
// when the node's Outcome frame arrives, and it quiesces when the node's
// Quiesced frame does: only then may the view's slots be reused.
//
// If the connection ends first, the node may still be moving the rows:
// an outcome not yet known is forced (every row Pending, undelivered,
// the fault a *[NodeLostError] wrapping [ErrClosed]), and the attempt
// quiesces only once the node's process is proven to have exited
// ([Client.WaitNodeExit]); without that proof it never does. Its slots
// must not be reused before, and the client keeps the lend's memory
// mapped.
//
// All methods are safe for concurrent use; only Wait blocks.
type Attempt struct {
	c    *Client
	id   uint64 // the request id: the attempt's name on the wire
	dir  string // "publish" or "fetch"
	rows int
	done chan struct{}

	mu        sync.Mutex
	knownCh   chan struct{}
	known     bool
	outcome   contract.Outcome
	quiesced  bool
	cancelled bool
}

var _ contract.Attempt = (*Attempt)(nil)

func newAttempt(c *Client, id uint64, dir string, rows int) *Attempt {
	return &Attempt{c: c, id: id, dir: dir, rows: rows, done: make(chan struct{}), knownCh: make(chan struct{})}
}

// String names the attempt: "publish 7" (its request id).
func (a *Attempt) String() string { return fmt.Sprintf("%s %d", a.dir, a.id) }

// Outcome returns the outcome and true once it is known; until then the
// zero Outcome and false.
func (a *Attempt) Outcome() (contract.Outcome, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.outcome, a.known
}

// Known returns a channel closed once the outcome is known.
func (a *Attempt) Known() <-chan struct{} { return a.knownCh }

// Wait waits within ctx for the outcome and returns it, or the zero
// Outcome and ctx's error if ctx ends first (an outcome known by then
// wins). It does not wait for quiescence.
func (a *Attempt) Wait(ctx context.Context) (contract.Outcome, error) {
	select {
	case <-a.knownCh:
	case <-ctx.Done():
		if o, ok := a.Outcome(); ok {
			return o, nil
		}
		return contract.Outcome{}, ctx.Err()
	}
	o, _ := a.Outcome()
	return o, nil
}

// Quiesced reports whether the node said no store can touch the
// attempt's slots any more.
func (a *Attempt) Quiesced() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.quiesced
}

// Done returns a channel closed at quiescence.
func (a *Attempt) Done() <-chan struct{} { return a.done }

// Cancel asks the node to stop the attempt: rows no store has started
// end Cancelled, started ones run on, and quiescence still waits for
// them. It is advisory and does not block; after the outcome is known it
// does nothing.
func (a *Attempt) Cancel() {
	a.mu.Lock()
	if a.known || a.cancelled {
		a.mu.Unlock()
		return
	}
	a.cancelled = true
	a.mu.Unlock()
	a.c.cancel(a.id)
}

// know sets the outcome once; it reports whether this call set it.
func (a *Attempt) know(o contract.Outcome) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.known {
		return false
	}
	a.outcome, a.known = o, true
	close(a.knownCh)
	return true
}

// quiesce marks the attempt quiesced (its outcome must be known).
func (a *Attempt) quiesce() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.quiesced {
		return
	}
	a.quiesced = true
	close(a.done)
}

// lost forces the outcome of an attempt whose connection ended before
// its outcome came: every row Pending (the node may have moved any of
// them), none delivered, the fault err (a *NodeLostError).
//
// It is cut off: it quiesces only once the node's process is proven to
// have exited (Client.WaitNodeExit), since only then can nothing of the
// node touch its slots.
func (a *Attempt) lost(err error) {
	a.know(contract.Outcome{
		Delivered: make([]bool, a.rows),
		Rows:      make([]contract.RowStatus, a.rows), // Pending
		Fault:     fmt.Errorf("%v: the outcome never came: %w", a, err),
	})
	a.c.mu.Lock()
	exited := a.c.exited
	if !exited {
		a.c.cutOff = append(a.c.cutOff, a)
	}
	a.c.mu.Unlock()
	if exited {
		a.quiesce()
	}
}
