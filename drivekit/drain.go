package drivekit

import (
	"context"
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// closeFirst says what an owner closing the driver too early must do,
// whether or not a backend was ever built over it.
const closeFirst = "Drain it, and revoke every registration, before Close; " +
	"a driver lent to a backend is drained and closed by binding's Backend.Close"

// Drain stops taking work (every later Put, Get, lookup and
// registration is refused), ends Cancelled every row no worker took
// (whatever Capabilities.Cancel says), and waits within ctx until no
// worker runs a call or delivers a callback, and no lookup is inside the
// store. It returns true only if then every operation's access ended
// and none is Unprovable; false when ctx ends first, or at once when all
// that is left is Unprovable (that can never change). No callback
// follows a Drain that returned true. Calling it again answers anew.
// With [Options.GetsFirst] it also stops the pool: a Drain returns true
// only once every goroutine of the pool has left.
func (d *Driver) Drain(ctx context.Context) bool {
	d.mu.Lock()
	d.draining = true
	cancelled, _ := d.cancelQueuedLocked()
	for _, op := range cancelled {
		d.notifyLocked(op)
	}
	quiet := d.stopPoolLocked(ctx) &&
		d.awaitLocked(ctx, func() bool { return d.busy == 0 && d.pooled == 0 && len(d.open) == 0 && d.lookups.inside == 0 })
	d.drained = quiet && len(d.unprovable) == 0
	ok := d.drained
	d.mu.Unlock()
	return ok
}

// awaitLocked waits within ctx until done reports true, and reports
// whether it did. d.mu is held on entry and on return, and let go
// while it waits for the next wake.
func (d *Driver) awaitLocked(ctx context.Context, done func() bool) bool {
	for !done() {
		if d.wake == nil {
			d.wake = make(chan struct{})
		}
		wake := d.wake
		d.mu.Unlock()
		select {
		case <-wake:
			d.mu.Lock()
		case <-ctx.Done():
			d.mu.Lock()
			return false
		}
	}
	return true
}

// cancelQueuedLocked ends Cancelled every row no worker took and empties
// the queue (or the pool's); it returns the operations it changed and
// how many rows.
func (d *Driver) cancelQueuedLocked() (hit []*operation, rows int) {
	hit, rows = d.unpoolLocked()
	for _, p := range d.queue[d.head:] {
		if !p.op.waiting(p.lo) {
			continue
		}
		if n := p.op.cancelUntakenLocked(contract.Cancelled); n > 0 {
			hit, rows = append(hit, p.op), rows+n
		}
	}
	d.queue, d.head = nil, 0
	return hit, rows
}

// Close releases the driver. It is allowed only after a Drain that
// returned true, with every registration revoked and no lookup,
// registration or revocation inside the store; otherwise it fails with an error wrapping
// [contract.ErrDriverRejected] and changes nothing. Closing a closed
// driver returns nil. A store's [Closer] is called then, once; its
// error is Close's, and the driver is closed all the same.
func (d *Driver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.closed:
		return nil
	case !d.drained:
		return d.refusal("close", "no Drain has returned true (%s)", closeFirst)
	case len(d.regions)+len(d.leaving) > 0:
		return d.refusal("close", "%d registrations not revoked (%s)", len(d.regions)+len(d.leaving), closeFirst)
	case d.lookups.inside > 0:
		return d.refusal("close", "%d lookups still inside the store", d.lookups.inside)
	case d.regCalls > 0:
		return d.refusal("close", "%d registrations or revocations still inside the store", d.regCalls)
	}
	d.closed = true
	if d.closer == nil {
		return nil
	}
	d.mu.Unlock()
	defer d.mu.Lock()
	if err := d.closer.Close(); err != nil {
		return fmt.Errorf("%s: close: %w", d.name, err)
	}
	return nil
}
