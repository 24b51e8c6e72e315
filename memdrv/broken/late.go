package broken

import (
	"slices"
	"time"

	"github.com/kvshare/kvshare/contract"
)

// lateBy is how long after a Drain that returned true
// LateOnChangeAfterDrain calls back: well within any harness's wait, and
// long enough that a caller that looks at once sees nothing yet.
const lateBy = 5 * time.Millisecond

// afterTrueDrain arms the callbacks that OnChangeAfterDrain and
// LateOnChangeAfterDrain owe after a Drain that returned true, and
// records it for LookupAfterFalseDrain.
func (d *Driver) afterTrueDrain() {
	switch d.rule {
	case LookupAfterFalseDrain:
		d.mu.Lock()
		d.looks.drainedTrue = true
		d.mu.Unlock()
	case OnChangeAfterDrain:
		d.mu.Lock()
		d.armed = true
		d.mu.Unlock()
	case LateOnChangeAfterDrain:
		d.mu.Lock()
		cbs := slices.Clone(d.callbacks)
		d.mu.Unlock()
		time.AfterFunc(lateBy, func() {
			for _, f := range cbs {
				f()
			}
		})
	}
}

// opsWithPendingRows returns the operations with a row not final yet
// (DrainCallbackUnderLock).
func (d *Driver) opsWithPendingRows() []*operation {
	d.mu.Lock()
	ops := slices.Clone(d.ops)
	d.mu.Unlock()
	var out []*operation
	for _, o := range ops {
		if !o.inner.Poll(nil).Settled() {
			out = append(out, o)
		}
	}
	return out
}

// callBackUnderLock calls, holding the lock every Poll takes, the
// onChange of each of ops that now has a row Cancelled: Drain cancelled
// it (DrainCallbackUnderLock).
func (d *Driver) callBackUnderLock(ops []*operation) {
	d.pollLock <- struct{}{}
	defer func() { <-d.pollLock }()
	for _, o := range ops {
		if o.onChange != nil && slices.Contains(o.inner.Poll(nil).Rows, contract.Cancelled) {
			o.onChange()
		}
	}
}
