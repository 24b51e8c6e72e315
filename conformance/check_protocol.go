package conformance

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/kvshare/kvshare/contract"
)

// twoRows builds a two-row operation in the check's direction over a fresh
// region (objects staged for a get when the suite can), without
// submitting it.
func (b *bench) twoRows(tag string) moving {
	b.r.Helper()
	n := b.capRows(2)
	return b.rows(b.dir, b.region(n), seq(n), tag, b.canStage())
}

func checkOnChange(b *bench) {
	m := b.twoRows("watched")
	w := b.admit(b.dir, m.batch, nil, nil)
	w.settle()
	if w.calls.Load() == 0 {
		b.r.Errorf("%s: settled without a single onChange call: onChange is called whenever results or access change", w.label)
	}
}

// callbacksLater stages the operation about to be submitted so that its
// callbacks come after Put or Get returned, when the callback can see
// the operation: under Pause (resumed by the returned func), else under
// Hold (released by it). Without either hook the check skips: a driver
// may well finish a small batch before Put returns.
func (b *bench) callbacksLater() (letGo func()) {
	b.r.Helper()
	switch {
	case b.sub.Pause != nil:
		resume := b.pause()
		return func() { b.hook("resume", resume) }
	case b.sub.Hold != nil:
		g := b.hold(b.dir)
		return func() { b.hook("Gate.Release", g.Release) }
	}
	b.skip(skipHook, "the check needs callbacks that come after %v returns: the harness has no Pause or Hold hook", b.dir)
	return nil
}

// checkPollInCallback makes sure onChange is called, after Put or Get
// returned, at least once: every such call polls the operation from
// inside (see watch.onChange), and a Poll that cannot return while the
// callback runs is reported.
func checkPollInCallback(b *bench) {
	m := b.twoRows("polled-inside")
	called := make(chan struct{}, 1)
	letGo := b.callbacksLater()
	w := b.admit(b.dir, m.batch, nil, func(w *watch) {
		w.inCallback = func(op contract.Operation) {
			if op == nil {
				return
			}
			select {
			case called <- struct{}{}:
			default:
			}
		}
	})
	letGo()
	if !b.awaitCallback(called, "polling from inside onChange") {
		b.r.Fatalf("%s: no onChange call came within %v of letting the operation run", w.label, b.h.Wait)
	}
	w.settle()
	w.report()
}

func checkDrainWaitsForCallback(b *bench) {
	m := b.twoRows("last-callback")
	var blocked atomic.Bool
	entered := make(chan struct{})
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	b.undo = append(b.undo, free)
	letGo := b.callbacksLater()
	w := b.admit(b.dir, m.batch, nil, func(w *watch) {
		w.inCallback = func(op contract.Operation) {
			if op == nil {
				return
			}
			if op.Poll(nil).Access == contract.Open || !blocked.CompareAndSwap(false, true) {
				return
			}
			close(entered)
			<-release
		}
	})
	letGo()
	if !b.awaitCallback(entered, "blocking the last onChange") {
		b.r.Fatalf("%s: no onChange call saw access leave Open within %v: the change that ends access is followed by onChange", w.label, b.h.Wait)
	}
	// A true answer here is reported by drain, which finds the callback
	// still running.
	b.drain(true)
	free()
	if !b.drain(false) {
		b.r.Errorf("%s: Drain returned false after the last onChange was let go", w.label)
	}
	w.settle()
}

// checkNoCallbackAfterDrain goes on calling the driver after a Drain
// returned true, Cancel of every operation included; the teardown (which
// cancels every operation once more after its own true Drain) reports
// every onChange call that came after it.
func checkNoCallbackAfterDrain(b *bench) {
	m := b.twoRows("before-drain")
	w := b.admit(b.dir, m.batch, nil, nil)
	w.settle()
	if !b.drain(false) {
		b.r.Fatalf("%s: Drain returned false with every operation ended", w.label)
	}
	for range 2 {
		w.poll()
		b.cancelAll()
		b.drain(false)
	}
}

// cancelAll cancels every operation the check admitted, in one bounded
// call, as an owner tearing down may: after a Drain that returned true
// no Cancel may call back.
func (b *bench) cancelAll() {
	b.r.Helper()
	var panicked []string
	if len(b.watches) == 0 || b.hung {
		return
	}
	ok, _ := b.within(func() {
		for _, w := range b.watches {
			if op := w.operation(); op != nil {
				if p := cancelOf(op); p != nil {
					panicked = append(panicked, fmt.Sprintf("%s: Cancel panicked: %v", w.label, p))
				}
			}
		}
	})
	if !ok {
		b.hung = true
		b.r.Errorf("Cancel of every operation did not return within %v", b.h.Wait)
		return // the calls may run on: what they set is not read
	}
	b.checkpoint()
	for _, f := range panicked {
		b.r.Errorf("%s", f)
	}
}

// cancelOf cancels op and returns what Cancel panicked with, or nil.
func cancelOf(op contract.Operation) (panicked any) {
	defer func() { panicked = recover() }()
	op.Cancel()
	return nil
}

func checkAccessAfterResults(b *bench) {
	n := b.capRows(3)
	a := b.region(n)
	m := b.rows(b.dir, a, seq(n), "pending", b.canStage())
	// The watch holds every snapshot to the rule; the check polls while
	// rows are sure to be pending.
	switch {
	case b.sub.Hold != nil:
		g, w := b.admitHeld(m)
		w.poll()
		b.hook("Gate.Release", g.Release)
		w.settle()
	case b.sub.Pause != nil:
		resume := b.pause()
		w := b.admit(b.dir, m.batch, nil, nil)
		w.poll()
		b.hook("resume", resume)
		w.settle()
	default:
		b.skip(skipHook, "the check needs rows that are sure to be pending when it polls: the harness has no Hold or Pause hook")
	}
}

// checkFinalResultsStay polls a settled operation again, before and
// after a Drain; the watch holds each snapshot to the first final one.
func checkFinalResultsStay(b *bench) {
	m := b.twoRows("final")
	w := b.admit(b.dir, m.batch, nil, nil)
	w.settle()
	for range 3 {
		w.poll()
	}
	b.drain(false)
	w.poll()
}

// unprovableGet admits a get of one stored row, in a region of two
// slots, that the UnprovableGets hook leaves unprovable, and waits for
// it to settle so; it skips without the hook or a get.
func (b *bench) unprovableGet() (*arena, *watch) {
	b.r.Helper()
	b.needDir(GetDir)
	if b.sub.UnprovableGets == nil {
		b.skip(skipHook, "the harness cannot stage an unprovable get (no UnprovableGets hook)")
	}
	name := b.rowName("unprovable")
	if b.canStage() {
		b.stage(name, payload(name, int(b.h.SlotBytes)), false)
	}
	a := b.region(2)
	get := b.batch(row(name, a.span(0)))
	b.hook("UnprovableGets", func() { b.sub.UnprovableGets(get.Key(0)) })
	w := b.admit(GetDir, get, nil, nil)
	if st := w.settle(); st.Access != contract.Unprovable {
		b.r.Fatalf("%s: the harness staged an unprovable get, yet access ended %v", w.label, st.Access)
	}
	return a, w
}

func checkUnprovableTerminal(b *bench) {
	a, w := b.unprovableGet()
	for range 3 {
		w.poll()
	}
	if b.drain(true) {
		b.r.Errorf("%s: Drain, its context already ended, returned true while the operation's access is unprovable: Drain answers true only if none is", w.label)
	}
	w.poll()
	if b.drain(false) {
		b.r.Errorf("%s: Drain, its context with %v left, returned true while the operation's access is unprovable: Drain answers true only if none is, however long it may wait", w.label, b.h.Wait)
	}
	w.poll()
	err := b.unregister(b.lendingOf(a))
	switch {
	case err == nil:
		b.r.Errorf("%s: Unregister of region %s succeeded while an operation covering it is unprovable: the region stays registered", w.label, a.label)
	case !isRejected(err):
		b.r.Errorf("%s: Unregister of region %s (pinned by an unprovable operation) failed with %v, which does not wrap ErrDriverRejected", w.label, a.label, err)
	}
	w.poll()
	b.r.Logf("%s: the region's memory is kept for good, as an unprovable operation covers it", w.label)
}
