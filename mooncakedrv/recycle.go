package mooncakedrv

import (
	"context"
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

var _ contract.Recycler = (*Driver)(nil)

// Recycle is [contract.Recycler]'s, over the store client: it refuses
// every call while it runs, ends Cancelled the rows of every part no
// worker took, and waits within ctx for the parts inside the SDK, the
// calls still queueing parts, the callbacks under way and the lookups
// inside the store; the library forbids destroying a client under a
// call, so a part inside the SDK keeps the verdicts its call gives. It
// then destroys the client: mooncake_store_destroy returns only once the
// client's transfer threads were joined and their sockets closed, so no
// transfer it ever started can touch lent memory afterwards (the finding
// is in docs/design.md, "Destroying a client"). Every Unprovable
// operation's access then ends, its callback is called, and
// Config.Reopen's fresh client takes the old one's place, every live
// region registered with it again under the same handle.
//
// If ctx ends before the destroy, Recycle returns an error wrapping
// [contract.ErrDriverRejected]: nothing destroyed, no access changed,
// and the error says how many queued rows it had ended Cancelled before
// it waited. A destroy that fails (a panic in the binding) proves
// nothing: the same error, the access unchanged, and the driver keeps
// its client. Without Config.Reopen, or
// when the fresh client cannot be opened or a region registered with
// it, the error wraps [contract.ErrRecycledClosed]: every access ended,
// but the driver has no client (any client opened is destroyed again),
// refuses every call, and Unregister, Drain and Close then succeed.
func (d *Driver) Recycle(ctx context.Context) error {
	d.mu.Lock()
	switch {
	case d.closed:
		d.mu.Unlock()
		return fmt.Errorf("%w: mooncakedrv: recycle: driver closed", contract.ErrDriverRejected)
	case d.recycling:
		d.mu.Unlock()
		return fmt.Errorf("%w: mooncakedrv: recycle: another Recycle runs", contract.ErrDriverRejected)
	case d.void:
		d.mu.Unlock()
		return fmt.Errorf("%w: mooncakedrv: recycle: the driver has no client since a Recycle", contract.ErrDriverRejected)
	}
	d.recycling = true
	d.mu.Unlock()
	resume := d.pool.Pause()
	defer resume()
	cancelled := d.cancelQueued()
	if !d.quiet(ctx) {
		d.mu.Lock()
		d.recycling = false
		d.mu.Unlock()
		return fmt.Errorf("%w: mooncakedrv: recycle: calls still inside the store when the context ended (%v): nothing destroyed and no access changed; %s",
			contract.ErrDriverRejected, ctx.Err(), cancelledRows(cancelled))
	}
	if panicked, err := sdkCall(d.client.Destroy); panicked != nil || err != nil {
		d.mu.Lock()
		d.recycling = false
		d.mu.Unlock()
		d.log.Error("mooncakedrv: recycle: destroying the client failed; access stays as it was", "panic", panicked, "err", err, "cancelled", cancelled)
		return fmt.Errorf("%w: mooncakedrv: recycle: destroying the client failed (panic %v, err %v): nothing proven and no access changed; %s",
			contract.ErrDriverRejected, panicked, err, cancelledRows(cancelled))
	}
	ended := d.endUnprovable()
	for _, op := range ended {
		d.callOnChange(op)
	}
	if err := d.reopen(ctx); err != nil {
		d.mu.Lock()
		d.client, d.void, d.recycling = nil, true, false
		d.mu.Unlock()
		d.log.Warn("mooncakedrv: recycle: the client was destroyed and no fresh one is to be had; the driver is closed", "ended", len(ended), "err", err)
		return fmt.Errorf("%w: mooncakedrv: %w", contract.ErrRecycledClosed, err)
	}
	d.mu.Lock()
	d.recycling = false
	d.mu.Unlock()
	d.log.Info("mooncakedrv: recycle: client destroyed and opened again", "ended", len(ended))
	return nil
}

// cancelledRows says what a Recycle that gave up had done before it
// waited: the queued rows it ended Cancelled.
func cancelledRows(n int) string {
	if n == 0 {
		return "no row was queued, none cancelled"
	}
	return fmt.Sprintf("the %d rows no worker had taken were ended Cancelled first (they never reached the store)", n)
}

// cancelQueued ends Cancelled the rows of every part no worker took, and
// calls their callbacks, as Drain does; it returns how many rows.
func (d *Driver) cancelQueued() (rows int) {
	removed := d.pool.Cancel(func(*part) bool { return true })
	var touched []*operation
	d.mu.Lock()
	for _, p := range removed {
		rows += p.len()
		d.cancelPartLocked(p)
		if len(touched) == 0 || touched[len(touched)-1] != p.op {
			touched = append(touched, p.op)
		}
	}
	d.mu.Unlock()
	for _, p := range removed {
		d.releasePart(p)
	}
	for _, op := range touched {
		d.callOnChange(op)
	}
	return rows
}

// quiet waits within ctx, with the pool paused, until no call queues
// parts, no part runs, no callback is under way and no lookup is inside
// the store.
func (d *Driver) quiet(ctx context.Context) bool {
	return d.awaitIdle(ctx, func() (int, chan struct{}) { return d.admitting, d.admitIdle }) &&
		d.pool.Idle(ctx) && d.callbacks.Wait(ctx) &&
		d.awaitIdle(ctx, func() (int, chan struct{}) { return d.lookupsInStore, d.lookupsIdle })
}

// endUnprovable ends the access of every Unprovable operation, once the
// client that may still have touched their memory is destroyed, and
// returns them.
func (d *Driver) endUnprovable() []*operation {
	d.mu.Lock()
	defer d.mu.Unlock()
	ended := d.unprovable
	d.unprovable = nil
	for _, op := range ended {
		op.access = contract.Ended
		d.stats.RowsUnprovable -= int64(len(op.rows))
		d.stats.RowsRecycled += int64(len(op.rows))
	}
	d.stats.OpsRecycled += int64(len(ended))
	d.stats.Recycles++
	return ended
}

// reopen opens the fresh client and registers every live region with it;
// on any failure the fresh client is destroyed again.
func (d *Driver) reopen(ctx context.Context) error {
	if d.cfg.Reopen == nil {
		return fmt.Errorf("recycle: no Reopen in the driver's Config to open a fresh client")
	}
	c, err := d.cfg.Reopen(ctx)
	if err != nil {
		return fmt.Errorf("recycle: opening a fresh client: %w", err)
	}
	d.mu.Lock()
	live := d.regions.Live()
	d.mu.Unlock()
	for _, r := range live {
		panicked, err := sdkCall(func() error { return c.RegisterBuffer(r.Base, uint64(r.Len)) })
		if panicked != nil || err != nil {
			if _, derr := sdkCall(c.Destroy); derr != nil {
				d.log.Warn("mooncakedrv: recycle: destroying the fresh client", "err", derr)
			}
			return fmt.Errorf("recycle: registering region at %#x (%d bytes) with the fresh client: panic %v, err %v", r.Base, r.Len, panicked, err)
		}
	}
	d.mu.Lock()
	d.client = c
	d.mu.Unlock()
	return nil
}
