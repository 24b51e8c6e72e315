package drivekit

import (
	"context"
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// Recycle is [contract.Recycler]'s: it refuses every call while it runs,
// ends Cancelled every row no worker took, and waits within ctx until no
// worker runs a call or delivers a callback and no lookup, registration or revocation is inside the
// store. It then has the store tear its client down ([Teardown], with
// the regions registered now, to register again), ends the access of
// every Unprovable operation, calls their callbacks, and takes work
// again unless a Drain stopped it. If ctx ends first, or the teardown
// fails, it changes no access and returns an error wrapping
// [contract.ErrDriverRejected]; after Close it is refused the same way.
// Over a store without [Teardown] (every call's access ends when it
// returns) it tears nothing down: it succeeds when no operation is
// Unprovable, and is refused, changing nothing, when one is. A teardown that leaves
// no fresh resources is answered with an error wrapping
// [contract.ErrRecycledClosed]: every access ended, and the driver is
// closed (every call refused, every handle revoked, Drain true).
func (d *Driver) Recycle(ctx context.Context) error {
	d.mu.Lock()
	switch {
	case d.closed:
		d.mu.Unlock()
		return d.refusal("recycle", "driver closed")
	case d.recycling:
		d.mu.Unlock()
		return d.refusal("recycle", "another Recycle runs")
	case d.void:
		d.mu.Unlock()
		return d.refusal("recycle", "the store has no client since a Recycle")
	}
	d.recycling = true
	ops, cancelled := d.cancelQueuedLocked()
	for _, op := range ops {
		d.notifyLocked(op)
	}
	if !d.awaitLocked(ctx, func() bool { return d.busy == 0 && d.pooled == 0 && d.lookups.inside == 0 && d.regCalls == 0 }) {
		d.resumeLocked()
		d.mu.Unlock()
		return d.refusal("recycle", "calls still inside the store when the context ended (%v): nothing torn down and no access changed; %s", ctx.Err(), cancelledRows(cancelled))
	}
	if d.teardwn == nil && len(d.unprovable) > 0 {
		n := len(d.unprovable)
		d.resumeLocked()
		d.mu.Unlock()
		return d.refusal("recycle", "the store cannot tear its client down: %d operations stay Unprovable", n)
	}
	live := d.regionsLocked()
	bent := d.bend
	d.bend = bend{}
	d.mu.Unlock()

	var err error
	if d.teardwn != nil {
		err = d.teardwn.Teardown(ctx, live)
	}
	closed := errors.Is(err, contract.ErrRecycledClosed)
	d.mu.Lock()
	if err != nil && !closed {
		d.resumeLocked()
		d.mu.Unlock()
		return d.refusal("recycle", "the store's teardown failed, nothing torn down: %v", err)
	}
	ended := d.unprovable
	if bent.callBackFirst {
		d.mu.Unlock()
		for _, op := range ended {
			d.callOnChange(op)
		}
		d.mu.Lock()
	}
	d.unprovable = nil
	for _, op := range ended {
		op.access = contract.Ended
		d.stats.RowsRecycled += int64(len(op.batch.Rows))
	}
	d.stats.Recycles++
	d.stats.OpsRecycled += int64(len(ended))
	if closed {
		d.draining, d.drained, d.void = true, true, true
		clear(d.regions) // the store has no resources: nothing is registered
		d.relistLocked()
		d.stopPoolLocked(ctx) // idle: its workers leave even if ctx ends first
	}
	d.resumeLocked()
	d.mu.Unlock()
	if !bent.callBackFirst {
		for _, op := range ended {
			d.callOnChange(op)
		}
	}
	if closed {
		return fmt.Errorf("%s: recycle: %w", d.name, err)
	}
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

// resumeLocked ends a Recycle: calls are taken again (unless a Drain
// stopped the driver) and Drain is woken.
func (d *Driver) resumeLocked() {
	d.recycling = false
	d.wakeLocked()
	d.spawnLocked()
}

// regionsLocked is every region registered now, a copy.
func (d *Driver) regionsLocked() []contract.SlotRegion {
	return append([]contract.SlotRegion(nil), d.live...)
}

// bend is how the next Recycle that ends every access breaks its
// rules; the zero value keeps them.
type bend struct {
	callBackFirst bool
}

// CallBackBeforeEndOnRecycle makes the next Recycle call the onChange of
// every Unprovable operation before their access reads Ended, and not
// again after: a Poll from inside the callback still reads Unprovable.
// It is a deviation a conformance suite must catch (a callback follows
// the change it reports); the suite's self-test stages it.
func (d *Driver) CallBackBeforeEndOnRecycle() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.bend.callBackFirst = true
}

// Recycles returns how many Recycles ended every access.
func (d *Driver) Recycles() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return int(d.stats.Recycles)
}
