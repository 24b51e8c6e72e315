package broken

import (
	"context"
	"sync/atomic"

	"github.com/kvshare/kvshare/contract"
)

var _ contract.Recycler = (*Driver)(nil)

// recycleState is what the recycle rules remember of the driver.
type recycleState struct {
	running atomic.Int32 // UnregisterDuringRecycle: Recycles under way
	closed  atomic.Bool  // RecycleAfterClose: a Close returned nil
}

// Recycle is the wrapped driver's ([contract.Recycler]), bent by the
// recycle rules (see each rule's comment): it is memdrv's, exact, for
// every other rule, so every broken driver meets the recycle checks.
func (d *Driver) Recycle(ctx context.Context) error {
	d.enter()
	switch d.rule {
	case RecycleAfterClose:
		if d.recycled.closed.Load() {
			return nil // the refusal after Close, missing
		}
	case RecycleStopsOneTransfer:
		d.inner.StopOneStrayOnRecycle()
	case RecycleCallsBackFirst:
		d.inner.CallBackBeforeEndOnRecycle()
	}
	d.recycled.running.Add(1)
	err := d.inner.Recycle(ctx)
	d.recycled.running.Add(-1)
	if err != nil && ctx.Err() != nil && d.rule == RecycleGivesUpEndsAccess {
		d.claimEnded()
	}
	return err
}

// noteClosed records a Close that returned nil (RecycleAfterClose).
func (d *Driver) noteClosed() { d.recycled.closed.Store(true) }

// unregisterDuringRecycle reports whether UnregisterDuringRecycle
// answers nil to an Unregister of reg the wrapped driver refused with
// err: a Recycle runs. The registration is then owed, revoked in the
// wrapped driver once it can be.
func (d *Driver) unregisterDuringRecycle(reg contract.Registration, err error) bool {
	if err == nil || d.rule != UnregisterDuringRecycle || d.recycled.running.Load() == 0 {
		return false
	}
	d.mu.Lock()
	d.owed = append(d.owed, reg)
	d.mu.Unlock()
	return true
}

// claimEnded makes every operation that is Unprovable now read Ended
// from now on, and calls its onChange (RecycleGivesUpEndsAccess): what a
// Recycle that gave up and ended the access anyway would report.
func (d *Driver) claimEnded() {
	d.mu.Lock()
	ops := append([]*operation(nil), d.ops...)
	d.mu.Unlock()
	for _, o := range ops {
		if o.inner.Poll(nil).Access != contract.Unprovable {
			continue
		}
		o.mu.Lock()
		o.claimedEnded = true
		o.mu.Unlock()
		if o.onChange != nil {
			o.onChange()
		}
	}
}
