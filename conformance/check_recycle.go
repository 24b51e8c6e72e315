package conformance

import (
	"context"
	"errors"
	"slices"

	"github.com/kvshare/kvshare/contract"
)

// recycler returns the driver as a [contract.Recycler], or skips.
func (b *bench) recycler() contract.Recycler {
	b.r.Helper()
	rc, ok := b.d.(contract.Recycler)
	if !ok {
		b.skip(skipCapability, "the driver is not a contract.Recycler")
	}
	return rc
}

// recycle calls Recycle within ctx (the call bounded by Wait), with every
// operation admitted so far allowed one change from Unprovable to Ended
// while it runs, and holds those operations to what it answered (see
// recycleEnd). It returns Recycle's error.
func (b *bench) recycle(ctx context.Context) error {
	b.r.Helper()
	rc := b.recycler()
	ws := b.recycleBegin()
	var err error
	_, p := b.call("Recycle", func() { err = rc.Recycle(ctx) })
	if p != nil {
		b.r.Fatalf("Recycle panicked: %v", p)
	}
	b.recycleEnd(ws, err)
	return err
}

// recycleBegin allows every operation admitted so far one change from
// Unprovable to Ended, for a Recycle about to be called, and returns
// them.
func (b *bench) recycleBegin() []*watch {
	ws := slices.Clone(b.watches)
	for _, w := range ws {
		w.recyclable.Store(true)
	}
	return ws
}

// recycleEnd holds the operations ws, admitted before a Recycle, to what
// it answered: when Recycle fails (rule 3) no access may have changed,
// and the allowance is withdrawn; when it ends every access (nil, or
// ErrRecycledClosed), every one of them must read Ended with every row
// final (rule 4).
func (b *bench) recycleEnd(ws []*watch, err error) {
	b.r.Helper()
	ended := err == nil || errors.Is(err, contract.ErrRecycledClosed)
	for _, w := range ws {
		if w.operation() == nil {
			continue
		}
		if !ended {
			w.recyclable.Store(false)
			w.mu.Lock()
			changed := w.recycled
			w.mu.Unlock()
			if changed {
				b.r.Errorf("%s: Recycle failed (%v), yet the operation's access went from Unprovable to Ended: a Recycle that gives up changes no access", w.label, err)
			}
			continue
		}
		if st := w.poll(); st.Access != contract.Ended {
			b.r.Errorf("%s: Recycle returned %v, and the operation admitted before it reads access %v: every such operation ends Ended", w.label, err, st.Access)
		}
	}
	if err != nil && !ended && !isRejected(err) {
		b.r.Errorf("Recycle failed with %v, which wraps neither ErrDriverRejected nor ErrRecycledClosed", err)
	}
}

// finishStrays lets the transfers the store gave up on run to their end
// (the FinishStrays hook), when the harness has one; the next driver
// call's checkpoint then sees any memory they wrote after its access
// ended.
func (b *bench) finishStrays() {
	b.r.Helper()
	if b.sub.FinishStrays == nil {
		b.note("the transfers the store gave up on are not let run to their end after Recycle (a Recycle that reports access Ended without ending it goes unseen): the harness has no FinishStrays hook")
		return
	}
	b.hook("FinishStrays", b.sub.FinishStrays)
}

func checkRecycleEndsUnprovable(b *bench) {
	b.recycler()
	a, w := b.unprovableGet()
	if b.drain(true) {
		b.r.Errorf("%s: Drain returned true while the operation's access is unprovable", w.label)
	}
	calls := w.calls.Load()
	ctx, cancel := b.bound()
	defer cancel()
	err := b.recycle(ctx)
	switch {
	case errors.Is(err, contract.ErrRecycledClosed):
		b.r.Logf("%s: Recycle ended every access and closed the driver: %v", w.label, err)
	case err != nil:
		b.r.Fatalf("%s: Recycle with no row inside the store failed: %v", w.label, err)
	}
	if w.calls.Load() == calls {
		b.r.Errorf("%s: Recycle ended the operation's access without calling its onChange before it returned", w.label)
	}
	b.finishStrays()
	if !b.drain(false) {
		b.r.Errorf("Drain after a Recycle that ended every access returned false")
	}
	if err := b.unregister(b.lendingOf(a)); err != nil {
		b.r.Errorf("%s: Unregister of region %s after a Recycle ended the access covering it: %v", w.label, a.label, err)
	}
}

func checkRecycleWaitsForRows(b *bench) {
	b.recycler()
	a := b.region(2)
	g, w := b.admitHeld(b.rows(b.dir, a, []int{0}, "held", b.canStage()))
	// The context ends the moment Recycle first looks at it (see
	// consulted): a Recycle that waits within it for the held row sees it
	// end while it waits, and the check waits out no clock.
	bound, cancel := b.bound()
	err := b.recycle(&consulted{Context: bound, onConsult: cancel})
	cancel()
	switch {
	case err == nil:
		b.r.Errorf("%s: Recycle returned nil while a row was held inside the store past its context: it tears down only once the rows inside the store returned", w.label)
	case !isRejected(err):
		b.r.Errorf("%s: Recycle whose context ended while a row was held inside the store failed with %v, which does not wrap ErrDriverRejected", w.label, err)
	}
	if st := w.poll(); err != nil && st.Access != contract.Open {
		b.r.Errorf("%s: after a Recycle that gave up, the held row's operation reads access %v: it changes nothing", w.label, st.Access)
	}
	ctx, cancel := b.bound()
	defer cancel()
	within := &consulted{Context: ctx, onConsult: g.Release}
	err = b.recycle(within)
	b.hook("Gate.Release", g.Release)
	if err != nil && !errors.Is(err, contract.ErrRecycledClosed) {
		b.r.Errorf("%s: Recycle failed (%v) though its context had time left and the held row was let go when it first looked at it: Recycle waits within its context", w.label, err)
	}
	st := w.settle()
	w.expect(st, "the held row was let go inside Recycle and keeps the store's verdict", contract.Ready)
}

func checkRecycleKeepsRegistrations(b *bench) {
	b.recycler()
	if !b.canStage() {
		b.skip(skipHook, "the check needs objects in the store: the driver does not put and the harness has no Seed hook")
	}
	a := b.region(2)
	ctx, cancel := b.bound()
	defer cancel()
	if err := b.recycle(ctx); err != nil {
		if errors.Is(err, contract.ErrRecycledClosed) {
			b.skip(skipCapability, "Recycle closed the driver (%v): no registration to keep", err)
		}
		b.r.Fatalf("Recycle of an idle driver failed: %v", err)
	}
	for _, dir := range b.dirs() {
		m := b.rows(dir, a, []int{0}, "after-"+dir.String(), b.canStage())
		if dir == GetDir {
			m = b.rows(dir, a, []int{1}, "after-"+dir.String(), b.canStage())
		}
		w := b.admit(dir, m.batch, nil, nil)
		st := w.settle()
		w.expect(st, "a row in a region registered before Recycle moves after it", contract.Ready)
		if dir == GetDir && len(st.Rows) == 1 && st.Rows[0] == contract.Ready {
			if off, bad := firstDiff(a.slot(1), m.data[0]); bad {
				b.r.Errorf("%s: the object landed in the slot differs at byte %d", w.label, off)
			}
		}
	}
	if err := b.unregister(b.lendingOf(a)); err != nil {
		b.r.Errorf("Unregister of region %s registered before Recycle: %v", a.label, err)
	}
}
