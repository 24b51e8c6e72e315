package conformance

import (
	"sync"
	"sync/atomic"

	"github.com/kvshare/kvshare/contract"
)

// inCallback is a worker of the driver kept inside onChange: the one
// piece of running work the suite can stage on any driver, with no hook,
// since it owns the callback. A worker calls onChange before it counts
// itself finished, so while it is held there Drain must not answer true.
type inCallback struct {
	w       *watch
	m       moving
	release func()
}

// holdInCallback admits a one-row operation in the check's direction over
// a fresh region (its object staged for a get when the suite can) whose
// first onChange call made on a goroutine of the driver's own blocks
// until release is called; teardown releases it if the check does not.
// A call the driver makes synchronously, inside a call of the suite's
// (Put, Drain, a hook), is never held: the suite's call would wait for
// it. It waits, within Wait, until a worker is held, and skips when none
// comes: a driver that calls back only inside the suite's own calls has
// no worker to hold.
func (b *bench) holdInCallback(tag string) inCallback {
	b.r.Helper()
	m := b.rows(b.dir, b.region(1), []int{0}, tag, b.canStage())
	var taken atomic.Bool
	entered := make(chan struct{})
	let := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(let) }) }
	b.undo = append(b.undo, release)
	w := b.admit(b.dir, m.batch, nil, func(w *watch) {
		w.inCallback = func(contract.Operation) {
			if onSuiteCall() || !taken.CompareAndSwap(false, true) {
				return
			}
			close(entered)
			<-let
		}
	})
	if !b.awaitCallback(entered, "holding a worker inside onChange") {
		b.skip(skipDriver, "%s: no onChange call came on a goroutine of the driver's own within %v, so no worker could be held inside one", w.label, b.h.Wait)
	}
	return inCallback{w: w, m: m, release: func() { b.hook("release the callback", release) }}
}

// settle lets the held callback return, waits for the operation to
// settle, and puts the canary back over its memory in the suite's view,
// so that later looks for stray writes see only what came after.
func (c inCallback) settle(b *bench) contract.OpState {
	b.r.Helper()
	c.release()
	st := c.w.settle()
	for _, s := range c.m.spans() {
		c.m.a.repaint(s)
	}
	return st
}
