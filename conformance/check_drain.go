package conformance

import "github.com/kvshare/kvshare/contract"

// Drain's answers while work it must wait for still runs, and what a
// Drain that answered false still binds the driver to.

// checkDrainBusyCallback holds a worker inside onChange (no hook needed)
// and asks Drain with a context already ended, and with one that ends
// while Drain waits: both must answer false. Once the callback returned,
// Drain with time must answer true.
func checkDrainBusyCallback(b *bench) {
	c := b.holdInCallback("in-callback")
	if b.drain(true) {
		b.r.Errorf("%s: Drain, its context already ended, returned true while a worker was inside onChange: a worker calls onChange before it counts itself finished, so Drain cannot answer true before the callback returned", c.w.label)
	}
	if ok, _ := b.drainEnding(); ok {
		b.r.Errorf("%s: Drain returned true when its context ended while a worker was inside onChange: Drain answers true only once every callback returned, and false when its context ends first", c.w.label)
	}
	c.settle(b)
	if !b.drain(false) {
		b.r.Errorf("%s: Drain returned false once the callback returned and every operation settled", c.w.label)
	}
}

// checkDrainDeadline holds a row inside the store and asks Drain with a
// context that ends while Drain waits: it must answer false.
func checkDrainDeadline(b *bench) {
	a := b.region(1)
	g, w := b.admitHeld(b.rows(b.dir, a, []int{0}, "running", b.canStage()))
	if ok, _ := b.drainEnding(); ok {
		b.r.Errorf("%s: Drain returned true when its context ended while the row still ran in the store: Drain answers true only if every access ended, and false when its context ends first", w.label)
	}
	b.hook("Gate.Release", g.Release)
	st := w.settle()
	w.expect(st, "the held row was let go and its object is there", contract.Ready)
	if !b.drain(false) {
		b.r.Errorf("%s: Drain returned false once the held row was let go and settled", w.label)
	}
}

// checkRejectsAfterFalseDrain asks Drain, its context already ended,
// while a worker is held inside onChange; whatever Drain answers, it
// stopped taking work, so a Put and a Get over a region registered
// before it are refused and record nothing.
func checkRejectsAfterFalseDrain(b *bench) {
	spare := b.region(1)
	c := b.holdInCallback("in-callback")
	if b.drain(true) {
		b.r.Errorf("%s: Drain, its context already ended, returned true while a worker was inside onChange", c.w.label)
	}
	refused := b.refuseSpan("after-false-drain", spare.span(0), "a Drain stops taking work, whatever it answers")
	c.settle(b)
	if !b.drain(false) {
		b.r.Errorf("%s: Drain returned false once the callback returned and every operation settled", c.w.label)
	}
	b.refusedOnly(refused)
}

// checkCloseAfterFalseDrain makes every Drain answer false (a worker held
// inside onChange, the context already ended), then lets the work end
// and revokes every region: Close must still be refused, as no Drain
// answered true; after a Drain that does, Close succeeds.
func checkCloseAfterFalseDrain(b *bench) {
	c := b.holdInCallback("in-callback")
	falseOnly := !b.drain(true)
	if !falseOnly {
		b.r.Errorf("%s: Drain, its context already ended, returned true while a worker was inside onChange", c.w.label)
	}
	c.settle(b)
	for _, l := range b.lendings {
		if err := b.unregister(l); err != nil {
			b.r.Fatalf("Unregister of idle registration %d after the operation settled: %v", l.handle, err)
		}
	}
	if !falseOnly {
		return
	}
	if b.closeNow() == nil {
		b.r.Errorf("Close succeeded after only Drains that answered false, with every region unregistered: Close comes after a Drain that returned true")
		return
	}
	if !b.drain(false) {
		b.r.Fatalf("Drain returned false with every operation ended and every region unregistered")
	}
	if err := b.closeNow(); err != nil {
		b.r.Errorf("Close after a Drain that returned true, with every region unregistered: %v", err)
	}
}

// closeNow calls Close, marking the driver closed when it returns nil.
// A refusal that does not wrap ErrDriverRejected is reported.
func (b *bench) closeNow() error {
	b.r.Helper()
	var err error
	if _, p := b.call("Close", func() { err = b.d.Close() }); p != nil {
		b.r.Fatalf("Close panicked: %v", p)
	}
	switch {
	case err == nil:
		b.closed = true
		b.calm.Store(true)
		b.refuseLookupAfterClose()
	case !isRejected(err):
		b.r.Errorf("Close refused with %v, which does not wrap ErrDriverRejected", err)
	}
	return err
}
