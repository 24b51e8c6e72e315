package conformance

import (
	"context"
	"errors"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/rowbatch"
)

// submit hands a batch to Put or Get. The watch is returned in every
// case; err is the driver's refusal, or errNoOperation for a call that
// panicked or returned neither an operation nor an error (both
// reported). prep, if not nil, sees the watch before the driver does.
func (b *bench) submit(dir Direction, batch contract.RowBatch, hint contract.Hint, prep func(*watch)) (*watch, error) {
	b.r.Helper()
	lent, names := lendNames(batch)
	w := newWatch(b, dir, lent, describe(dir, batch, b.rowName("")))
	w.lent, names.w = names, w
	if prep != nil {
		prep(w)
	}
	w.beforeDrain = !b.drainedTrue.Load()
	b.retireSpans(batch)
	var op contract.Operation
	var err error
	name := "Put"
	if dir == GetDir {
		name = "Get"
	}
	b.watches = append(b.watches, w) // until the driver certifies otherwise
	_, p := b.call(w.label+": "+name, func() {
		if dir == PutDir {
			op, err = b.d.Put(lent, w.onChange)
		} else {
			op, err = b.d.Get(lent, hint, w.onChange)
		}
	})
	switch {
	case p != nil:
		b.r.Errorf("%s: %s panicked: %v: Put and Get never panic; every failure after admission is a row result", w.label, name, p)
		return w, errNoOperation
	case err != nil && op != nil:
		b.r.Errorf("%s: %s returned an operation and an error (%v): admission either fails or returns an operation", w.label, name, err)
		w.op.Store(&op)
		return w, err
	case err != nil && !errors.Is(err, contract.ErrDriverRejected):
		b.r.Errorf("%s: %s refused with an error that does not wrap ErrDriverRejected: %v", w.label, name, err)
		return w, err
	case err != nil:
		b.watches = b.watches[:len(b.watches)-1]
		b.refused = append(b.refused, w)
		return w, err
	case op == nil:
		b.r.Errorf("%s: %s returned a nil operation and a nil error: admission returns an operation or an error wrapping ErrDriverRejected", w.label, name)
		return w, errNoOperation
	}
	w.op.Store(&op)
	return w, nil
}

// isRejected reports whether err wraps ErrDriverRejected.
func isRejected(err error) bool { return errors.Is(err, contract.ErrDriverRejected) }

var errNoOperation = errors.New("conformance: the driver returned no operation")

// admit submits a batch that must be admitted.
func (b *bench) admit(dir Direction, batch contract.RowBatch, hint contract.Hint, prep func(*watch)) *watch {
	b.r.Helper()
	b.valid(batch)
	w, err := b.submit(dir, batch, hint, prep)
	switch {
	case errors.Is(err, errNoOperation):
		b.r.Fatalf("%s: the check cannot go on without an operation", w.label)
	case err != nil:
		b.r.Fatalf("%s: refused a batch that lies wholly in live registrations: %v", w.label, err)
	}
	return w
}

// valid makes sure a batch the suite calls valid passes rowbatch.Check
// over the live registrations, so that a refusal is the driver's doing.
func (b *bench) valid(batch contract.RowBatch) {
	b.r.Helper()
	if err := rowbatch.Check(batch, b.live(), b.caps.MultiSpan); err != nil {
		b.r.Fatalf("conformance: the suite built a bad batch: %v", err)
	}
}

// refuse submits a batch that must be refused with ErrDriverRejected.
func (b *bench) refuse(dir Direction, batch contract.RowBatch, hint contract.Hint, why string) *watch {
	b.r.Helper()
	w, err := b.submit(dir, batch, hint, nil)
	if err == nil {
		b.r.Errorf("%s: admitted, want refused with ErrDriverRejected: %s", w.label, why)
	}
	return w
}

// drain calls Drain with a context bounded by Wait, or already expired
// when now is true, and returns its answer.
func (b *bench) drain(now bool) bool {
	b.r.Helper()
	ctx, cancel := b.bound()
	if now {
		cancel()
	}
	defer cancel()
	return b.drainWithin(ctx)
}

// drainWithin calls Drain with ctx and returns its answer. A true answer
// is held to rule 2 for every operation (see watch.afterTrueDrain); a
// false one is followed by a put and a get that must be refused (see
// refuseAfterFalseDrain).
func (b *bench) drainWithin(ctx context.Context) bool {
	b.r.Helper()
	b.spareBeforeDrain()
	b.drains++
	var ok bool
	done, p := b.call("Drain", func() { ok = b.d.Drain(ctx) })
	switch {
	case !done:
		return false
	case p != nil:
		b.r.Errorf("Drain panicked: %v", p)
		return false
	case !ok:
		b.refuseAfterFalseDrain()
		return false
	}
	b.drainedTrue.Store(true)
	b.run.event()
	for _, w := range b.watches {
		w.afterTrueDrain()
	}
	return true
}

// drainEnding calls Drain with a context that has Wait left and ends the
// moment Drain first looks at it (see consulted): a Drain that waits
// within its context sees it end while it waits. It returns Drain's
// answer and whether Drain looked at the context.
func (b *bench) drainEnding() (ok, looked bool) {
	b.r.Helper()
	ctx, cancel := b.bound()
	defer cancel()
	within := &consulted{Context: ctx, onConsult: cancel}
	ok = b.drainWithin(within)
	return ok, within.looked()
}

// hold asks the harness to hold rows in dir, and releases them at
// teardown if the check does not.
func (b *bench) hold(dir Direction) Gate {
	b.r.Helper()
	if b.sub.Hold == nil {
		b.skip(skipHook, "the harness cannot hold a %v inside the store (no Hold hook)", dir)
	}
	var g Gate
	b.hook("Hold", func() { g = b.sub.Hold(dir) })
	if g == nil {
		b.r.Fatalf("the Hold hook returned no Gate")
	}
	b.undo = append(b.undo, g.Release)
	return g
}

// admitHeld holds the check's direction, admits m, and waits until a
// row of it is held inside the store.
func (b *bench) admitHeld(m moving) (Gate, *watch) {
	b.r.Helper()
	g := b.hold(b.dir)
	w := b.admit(b.dir, m.batch, nil, nil)
	if !b.await(g.Held) {
		b.r.Fatalf("%s: no row was held inside the store within %v", w.label, b.h.Wait)
	}
	return g, w
}

// await runs wait with a context bounded by Wait, and reports whether
// it returned nil in time (a wait that ignores its context is let run
// on, and counts as not in time).
func (b *bench) await(wait func(context.Context) error) bool {
	ctx, cancel := b.bound()
	defer cancel()
	var err error
	ok, p := b.within(func() { err = wait(ctx) })
	return ok && p == nil && err == nil
}

// awaitCallback waits, within Wait, for ch, which an onChange call
// closes or sends on, and reports whether it came. A run that saw the
// driver change an operation without calling onChange does not wait:
// the check fails at once, saying where the driver was seen silent.
func (b *bench) awaitCallback(ch <-chan struct{}, what string) bool {
	b.r.Helper()
	if in := b.run.silentIn(); in != "" {
		b.r.Fatalf("%s needs onChange calls, and the driver was seen changing an operation without calling onChange (in %s): not waiting for one", what, in)
	}
	if b.await(arrived(ch)) {
		return true
	}
	b.run.waitRanOut()
	return false
}

// arrived returns a wait for ch to be closed or sent on, for await.
func arrived(ch <-chan struct{}) func(context.Context) error {
	return func(ctx context.Context) error {
		select {
		case <-ch:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// pause asks the harness to leave operations unstarted.
func (b *bench) pause() (resume func()) {
	b.r.Helper()
	if b.sub.Pause == nil {
		b.skip(skipHook, "the harness cannot leave operations unstarted (no Pause hook)")
	}
	b.hook("Pause", func() { resume = b.sub.Pause() })
	if resume == nil {
		b.r.Fatalf("the Pause hook returned no resume function")
	}
	b.undo = append(b.undo, resume)
	return resume
}
