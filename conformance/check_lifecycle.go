package conformance

import (
	"github.com/kvshare/kvshare/contract"
)

func checkHeldRow(b *bench) {
	a := b.region(2)
	first := b.rows(b.dir, a, []int{0}, "held", b.canStage())
	second := b.rows(b.dir, a, []int{1}, "behind", b.canStage())
	g, w1 := b.admitHeld(first)
	w2 := b.admit(b.dir, second.batch, nil, nil) // bounded: admission must not wait for the held row
	if b.drain(true) {
		b.r.Errorf("%s: Drain returned true while the row is held inside the store with access open: Drain answers true only if every access ended", w1.label)
	}
	b.hook("Gate.Release", g.Release)
	st := w1.settle()
	w1.expect(st, "the held row was let go and its object is there", contract.Ready)
	st = w2.settle()
	w2.expect(st, "the row ran after the hold was let go, or Drain cancelled it first", contract.Ready, contract.Cancelled)
	if !b.drain(false) {
		b.r.Errorf("Drain returned false after every operation settled")
	}
}

func checkDrainWaitsForRows(b *bench) {
	a := b.region(1)
	g, w := b.admitHeld(b.rows(b.dir, a, []int{0}, "running", b.canStage()))
	ctx, cancel := b.bound()
	defer cancel()
	within := &consulted{Context: ctx, onConsult: g.Release}
	ok := b.drainWithin(within)
	b.hook("Gate.Release", g.Release)
	switch {
	case ok:
	case !within.looked():
		b.r.Errorf("%s: Drain returned false without looking at its context, which had %v left, while a row ran in the store: Drain waits within its context for running rows", w.label, b.h.Wait)
	default:
		b.r.Errorf("%s: Drain returned false though its context had time left and the row running in the store was let go when Drain first looked at the context: Drain waits within its context for running rows", w.label)
	}
	st := w.settle()
	w.expect(st, "the held row was let go and its object is there", contract.Ready)
}

func checkCancel(b *bench) {
	if !b.caps.Cancel {
		b.skip(skipCapability, "the driver does not declare Cancel")
	}
	n := b.capRows(2)
	a := b.region(n)
	m := b.rows(b.dir, a, seq(n), "cancelled", b.canStage())
	resume := b.pause()
	w := b.admit(b.dir, m.batch, nil, nil)
	if ok, p := b.call("Cancel", w.operation().Cancel); ok && p != nil {
		b.r.Errorf("%s: Cancel panicked: %v", w.label, p)
	}
	b.hook("resume", resume)
	st := w.settle()
	w.expect(st, "Cancel came before any worker took the row", contract.Cancelled)
	if st.Access != contract.Ended {
		b.r.Errorf("%s: every row cancelled, yet access is %v: a row that never ran leaves nothing to wait for", w.label, st.Access)
	}
	b.quietCancelled(w, m)
}

// quietCancelled checks that cancelled rows touched nothing.
func (b *bench) quietCancelled(w *watch, m moving) {
	b.r.Helper()
	if b.dir == GetDir {
		b.untouched("a cancelled row never ran")
		return
	}
	if b.sub.Object != nil {
		for i := range m.batch.Rows {
			if key := m.batch.Key(i); b.hasObject(key) {
				b.r.Errorf("%s: the store holds an object under %q, yet its row was cancelled before any worker took it", w.label, key)
			}
		}
	}
}

func checkDrainCancelsQueued(b *bench) {
	n := b.capRows(2)
	a := b.region(n)
	m := b.rows(b.dir, a, seq(n), "queued", b.canStage())
	b.pause()
	w := b.admit(b.dir, m.batch, nil, nil)
	if !b.drain(false) {
		b.r.Errorf("%s: Drain returned false with only rows no worker took: Drain cancels them rather than waiting", w.label)
	}
	st := w.settle()
	w.expect(st, "Drain cancels rows no worker took", contract.Cancelled)
	b.quietCancelled(w, m)
}

func checkUnregisterBusy(b *bench) {
	a := b.region(2)
	g, w := b.admitHeld(b.rows(b.dir, a, []int{0}, "busy", b.canStage()))
	err := b.unregister(b.lendingOf(a))
	switch {
	case err == nil:
		b.r.Errorf("%s: Unregister succeeded while the operation covering region %s has access open: a busy region stays registered", w.label, a.label)
	case !isRejected(err):
		b.r.Errorf("%s: Unregister of busy region %s failed with %v, which does not wrap ErrDriverRejected", w.label, a.label, err)
	}
	b.hook("Gate.Release", g.Release)
	w.settle()
	if err == nil {
		return
	}
	if b.moveRow(a, 1) {
		if err := b.unregister(b.lendingOf(a)); err != nil {
			b.r.Errorf("Unregister of region %s once idle: %v", a.label, err)
		}
	}
}

func checkUnregisterRevokes(b *bench) {
	a := b.region(2)
	b.moveRow(a, 0)
	if err := b.unregister(b.lendingOf(a)); err != nil {
		b.r.Fatalf("Unregister of idle region %s: %v", a.label, err)
	}
	b.quietAfter(b.refuseSpan("unregistered", a.span(1), "its region was unregistered, so the span lies in no registration"))
}

func checkRejectsAfterDrain(b *bench) {
	a := b.region(2)
	b.moveRow(a, 0)
	if !b.drain(false) {
		b.r.Fatalf("Drain returned false with every operation ended")
	}
	refused := b.refuseSpan("after-drain", a.span(1), "Drain stops taking work")
	b.drain(false)
	b.refusedOnly(refused)
	if err := b.unregister(b.lendingOf(a)); err != nil {
		b.r.Errorf("Unregister of idle region %s after a Drain: %v", a.label, err)
	}
}

func checkClose(b *bench) {
	a := b.region(2)
	b.moveRow(a, 0)
	if b.closeNow() == nil {
		b.r.Fatalf("Close succeeded before any Drain: Close comes last, after a Drain that returned true")
	}
	b.moveRow(a, 1) // a refused Close keeps everything
	if !b.drain(false) {
		b.r.Fatalf("Drain returned false with every operation ended")
	}
	if b.closeNow() == nil {
		b.r.Fatalf("Close succeeded with region %s still registered: Close comes after every region is unregistered", a.label)
	}
	for _, l := range b.lendings { // a, and the spare region of the probes after a false Drain
		if l.revoked {
			continue
		}
		if err := b.unregister(l); err != nil {
			b.r.Fatalf("Unregister of idle registration %d after a true Drain: %v", l.handle, err)
		}
	}
	if err := b.closeNow(); err != nil {
		b.r.Errorf("Close after a Drain that returned true, with every region unregistered: %v", err)
	}
}

// checkCancelRunning cancels an operation whose row runs in the store
// (held by the Hold hook). The row runs on or ends Cancelled without
// having touched its memory; either way, once a Poll shows access Ended
// the memory is sealed (see seal), so a driver that reports the row
// ended while its transfer still runs is caught when the transfer
// touches the memory: the suite lets the row go and drains, which waits
// for it.
func checkCancelRunning(b *bench) {
	a := b.region(2)
	m := b.rows(b.dir, a, []int{0}, "running", b.canStage())
	g, w := b.admitHeld(m)
	if ok, p := b.call("Cancel", w.operation().Cancel); ok && p != nil {
		b.r.Errorf("%s: Cancel panicked: %v", w.label, p)
	}
	w.poll()
	b.hook("Gate.Release", g.Release)
	st := w.settle()
	w.expect(st, "Cancel came while the row ran in the store: the row runs on (ready) or ends cancelled, having touched nothing", contract.Ready, contract.Cancelled)
	if !b.drain(false) {
		b.r.Errorf("%s: Drain returned false once the row was let go and settled", w.label)
	}
	switch {
	case len(st.Rows) == 0:
	case st.Rows[0] == contract.Ready && b.dir == GetDir:
		m.landed(b, w, st)
	case st.Rows[0] == contract.Cancelled:
		b.quietCancelled(w, m)
	}
}

// checkUnregisterQueued asks Unregister of a region whose only operation
// waits unstarted (the Pause hook): the operation keeps the region busy
// from admission on, so Unregister is refused.
func checkUnregisterQueued(b *bench) {
	a := b.region(2)
	m := b.rows(b.dir, a, []int{0}, "queued", b.canStage())
	resume := b.pause()
	w := b.admit(b.dir, m.batch, nil, nil)
	err := b.unregister(b.lendingOf(a))
	switch {
	case err == nil:
		b.r.Errorf("%s: Unregister succeeded while the operation's row in region %s waited unstarted (no worker took it): an operation keeps its region busy from admission until its access ended", w.label, a.label)
	case !isRejected(err):
		b.r.Errorf("%s: Unregister of region %s, busy with an operation no worker took yet, failed with %v, which does not wrap ErrDriverRejected", w.label, a.label, err)
	}
	b.hook("resume", resume)
	st := w.settle()
	w.expect(st, "the row ran once the workers were let go", contract.Ready)
	if err == nil {
		return
	}
	if b.moveRow(a, 1) {
		if err := b.unregister(b.lendingOf(a)); err != nil {
			b.r.Errorf("Unregister of region %s once idle: %v", a.label, err)
		}
	}
}
