package conformance

import (
	"context"
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// The lookup checks of the situations a lookup meets beside the
// driver's own work: puts that ended other than Ready, a store that
// fails the presence call, lookups after a Drain that answered false and
// after Close, names read after Lookup returned, and InFlight for puts
// no worker took yet.

// unsettledPut is a put of the check's whose row ended other than Ready,
// as a lookup check stages it: the row's name and object, why its put
// ended as it did (for findings), and whether something may still write
// its key (InFlight is then no finding).
type unsettledPut struct {
	name    string
	data    []byte
	why     string
	written bool
}

// putOne puts data as the row named name from slot i of a, and waits
// for it to settle.
func (b *bench) putOne(a *arena, i int, name string, data []byte) (*watch, contract.OpState) {
	b.r.Helper()
	b.fill(a, i, data)
	w := b.admit(PutDir, b.batch(row(name, a.span(i))), nil, nil)
	return w, w.settle()
}

// checkLookupFailedPut puts keys whose puts end other than Ready, each
// case as the harness can stage it: beside another writer that then
// abandons its object (the Writing hook: NotReady), queued and cancelled
// before any worker took it (the Pause hook, with Cancel), refused by a
// full store (the Full hook: Declined), crashed inside the store (the
// Crash hook: Fault). It then asks about all of them, beside a name a
// put stored whole, in one batch and each alone. A name reads Present
// only if a get made right after reads its put's object whole (or,
// with PresenceFromIndex, ends Fault): never for no object or a torn
// one. None but the crashed one may read InFlight: nothing writes them
// any more (a store may keep a crashed write's claim open for a while).
func checkLookupFailedPut(b *bench) {
	l := b.looker()
	b.needDir(PutDir)
	if !b.canReadBack() {
		b.skip(skipHook, "the check reads back what reads present: the driver does not get and the harness has no Object hook")
	}
	stored := b.rowName("stored")
	b.stage(stored, payload(stored, int(b.h.SlotBytes)), true)
	a := b.region(4)
	var cases []unsettledPut
	// add stages before (with the row's key), puts the row named tag
	// from slot i of a and records how it ended.
	add := func(tag string, i int, before func(key string), why string, written bool) {
		name := b.rowName(tag)
		data := payload(name, int(b.h.SlotBytes))
		before(b.keyOf(name))
		_, st := b.putOne(a, i, name, data)
		cases = append(cases, unsettledPut{name: name, data: data, why: fmt.Sprintf(why, st.Rows), written: written})
	}

	if b.sub.Writing != nil {
		var finish func([]byte)
		add("beside-writer", 0, func(key string) {
			b.hook("Writing", func() { finish = b.sub.Writing(key) })
			if finish == nil {
				b.r.Fatalf("the Writing hook returned no finish function")
			}
			b.undo = append(b.undo, func() { finish(nil) })
		}, "its put ended %v while another writer held its key, and that writer then abandoned the object", false)
		b.hook("finish", func() { finish(nil) })
	} else {
		b.note("a put that ended beside another writer: the harness has no Writing hook")
	}

	switch {
	case b.sub.Pause == nil:
		b.note("a put cancelled before any worker took it: the harness has no Pause hook")
	case !b.caps.Cancel:
		b.note("a put cancelled before any worker took it: the driver does not declare Cancel")
	default:
		name := b.rowName("cancelled")
		data := payload(name, int(b.h.SlotBytes))
		resume := b.pause()
		b.fill(a, 1, data)
		w := b.admit(PutDir, b.batch(row(name, a.span(1))), nil, nil)
		if ok, p := b.call("Cancel", w.operation().Cancel); ok && p != nil {
			b.r.Errorf("%s: Cancel panicked: %v", w.label, p)
		}
		st := w.settle()
		b.hook("resume", resume)
		cases = append(cases, unsettledPut{name: name, data: data, why: fmt.Sprintf("its put was cancelled before any worker took it and ended %v", st.Rows)})
	}

	if b.sub.Full != nil {
		add("declined", 2, func(string) { b.hook("Full", b.sub.Full) },
			"its put ended %v in a store that refused it on its own terms (the Full hook)", false)
	} else {
		b.note("a put a full store refused: the harness has no Full hook")
	}
	if b.sub.Crash != nil {
		add("crashed", 3, func(string) { b.hook("Crash", func() { b.sub.Crash(PutDir) }) },
			"its put crashed inside the store and ended %v, which may leave a whole object, a torn one or none", true)
	} else {
		b.note("a put that crashed inside the store: the harness has no Crash hook")
	}
	if len(cases) == 0 {
		b.skip(skipHook, "the check needs a put that ends other than Ready: the harness has none of the Writing, Pause (with Cancel), Full and Crash hooks")
	}

	names := []string{stored}
	for _, c := range cases {
		names = append(names, c.name)
	}
	probes := []probe{b.probe(names...)}
	for _, c := range cases {
		probes = append(probes, b.probe(c.name))
	}
	reported := map[string]bool{}
	for _, p := range probes {
		for i, x := range b.answered(l, p) {
			name := p.names[i]
			if name == stored {
				if x != contract.Present {
					b.r.Errorf("%s: %s reads %v, want present: a put of the driver stored its object whole and nothing writes it", p.label, p.name(i), x)
				}
				continue
			}
			c := cases[indexOfCase(cases, name)]
			switch {
			case reported[name]:
			case x == contract.Present:
				reported[name] = !b.readsWhole(p, i, c.data, c.why)
			case x == contract.InFlight && !c.written:
				reported[name] = true
				b.r.Errorf("%s: %s reads in-flight, yet nothing writes it: %s; InFlight is never answered for a name no one writes", p.label, p.name(i), c.why)
			}
		}
	}
}

// indexOfCase returns the index of the case named name.
func indexOfCase(cases []unsettledPut, name string) int {
	for i, c := range cases {
		if c.name == name {
			return i
		}
	}
	panic("conformance: no staged put named " + name)
}

// checkLookupStoreFails stores objects under two names, one of which
// the store will fail to answer for, and makes the store fail every
// presence call about that one and about a name never stored (the
// FailLookups hook). A name the store did not answer is Unknown, never
// Absent (nor InFlight: nothing writes it; nor Present without a whole
// object behind it), whether asked beside others or alone; a name beside
// them keeps its truth or reads Unknown (a store that fails a call as a
// whole answers none of it), never the opposite.
func checkLookupStoreFails(b *bench) {
	l := b.looker()
	if b.sub.FailLookups == nil {
		b.skip(skipHook, "the harness cannot make the store fail a lookup (no FailLookups hook)")
	}
	if !b.canStage() {
		b.skip(skipHook, "the check needs objects in the store: the driver does not put and the harness has no Seed hook")
	}
	stored, failStored := b.rowName("stored"), b.rowName("failing-stored")
	failAbsent, never := b.rowName("failing-never-stored"), b.rowName("never-stored")
	data := map[string][]byte{stored: payload(stored, int(b.h.SlotBytes)), failStored: payload(failStored, int(b.h.SlotBytes))}
	b.stage(stored, data[stored], true)
	b.stage(failStored, data[failStored], false)
	failing := map[string]bool{failStored: true, failAbsent: true}
	keys := []string{b.keyOf(failStored), b.keyOf(failAbsent)}
	b.hook("FailLookups", func() { b.sub.FailLookups(keys...) })
	const unanswered = "the store failed to answer for it (the FailLookups hook), and a name the store did not answer is Unknown, never Absent"
	for _, p := range []probe{b.probe(stored, failStored, failAbsent, never), b.probe(failStored), b.probe(failAbsent)} {
		for i, x := range b.answered(l, p) {
			name := p.names[i]
			switch {
			case failing[name] && x == contract.Absent:
				b.r.Errorf("%s: %s reads absent, want unknown: %s", p.label, p.name(i), unanswered)
			case x == contract.InFlight:
				b.r.Errorf("%s: %s reads in-flight, yet nothing writes it: InFlight is never answered for a name no one writes", p.label, p.name(i))
			case failing[name] && x == contract.Present:
				b.readsWhole(p, i, data[name], "the store failed to answer for it (the FailLookups hook)")
			case name == stored && x == contract.Absent:
				b.r.Errorf("%s: %s reads absent, yet its object was stored whole, beside names the store failed to answer for: Absent means no object has the key", p.label, p.name(i))
			case name == never && x == contract.Present:
				b.r.Errorf("%s: %s reads present, yet the name was never stored", p.label, p.name(i))
			}
		}
	}
}

// checkLookupAfterFalseDrain asks Drain, its context already ended,
// while a worker is held inside onChange: it answers false, and stops
// taking work all the same, so a lookup after it is refused. With the
// HoldLookups hook the lookup's keys are held first, so that a refused
// lookup that asked the store anyway stays inside it, and the Drain
// after the callback returned, which must answer true, shows it.
func checkLookupAfterFalseDrain(b *bench) {
	l := b.looker()
	dirs := b.dirs()
	if len(dirs) == 0 {
		b.skip(skipCapability, "the driver declares no direction, so no worker can be held inside onChange")
	}
	// The check is not run per direction: it holds a worker of the first
	// direction the driver serves.
	b.dir = dirs[0]
	p := b.probe(b.rowName("after-0"), b.rowName("after-1"))
	held := b.sub.HoldLookups != nil
	if held {
		b.holdLookups(p)
	} else {
		b.note("a refused lookup that asked the store anyway goes unseen: the harness has no HoldLookups hook to hold it there")
	}
	c := b.holdInCallback("in-callback")
	if b.drain(true) {
		b.r.Errorf("%s: Drain, its context already ended, returned true while a worker was inside onChange: the check cannot stage a Drain that answers false", c.w.label)
		return
	}
	ctx, cancel := b.bound()
	if held {
		cancel()
		ctx, cancel = b.brief() // a lookup that asks the store is held there: it comes back with its answer
	}
	b.refuseLookupWithin(ctx, l, p.batch, "after a Drain that answered false",
		"a Drain stops taking work, lookups included, whatever it answers: a lookup after one is refused and asks nothing of the store")
	cancel()
	c.settle(b)
	if !b.drain(false) {
		why := "every operation settled"
		if held {
			why += ", and a lookup refused after a Drain asks nothing of the store, yet one is held inside it"
		}
		b.r.Errorf("%s: Drain returned false once the callback returned: %s", c.w.label, why)
	}
}

// checkLookupAfterClose asks about a name, drains, closes the driver
// (nothing registered), and asks about the same name again: a closed
// driver refuses it, as it refuses Put and Get, and asks nothing of the
// store it closed (every Close of every check is followed by such a
// lookup of a fresh name too).
func checkLookupAfterClose(b *bench) {
	l := b.looker()
	p := b.probe(b.rowName("asked-before"))
	b.answered(l, p)
	if !b.drain(false) {
		b.r.Fatalf("Drain returned false with nothing admitted")
	}
	if err := b.closeNow(); err != nil {
		b.r.Fatalf("Close after a Drain that returned true, with nothing registered: %v", err)
	}
	b.refuseLookup(l, p.batch, "after Close, a name asked before it",
		"a closed driver answers no lookup and asks nothing of the store it closed")
}

// checkLookupNamesAfterReturn makes lookups the driver answers, refuses
// and (with the HoldLookups hook) abandons at their context's end, and
// goes on calling the driver after each returned (another lookup, a
// row moved, a Drain that waits for the abandoned call to leave the
// store): every one is a chance for a driver that reads a lookup's name
// late (a retry, a log line, the abandoned call building its keys when
// the store answers) to hand the key maker a name the suite has written
// over (see nameBook). Every lookup of every check is watched the same
// way; this one makes the calls after the return on purpose.
func checkLookupNamesAfterReturn(b *bench) {
	l := b.looker()
	b.answered(l, b.probe(b.rowName("answered-0"), b.rowName("answered-1")))
	twice := b.rowName("refused")
	b.refuseLookup(l, b.probe(twice, b.rowName("refused-other"), twice).batch, "a name twice",
		"a lookup the driver cannot ask about is refused")
	if b.sub.HoldLookups != nil {
		held := b.probe(b.rowName("abandoned-0"), b.rowName("abandoned-1"))
		g := b.holdLookups(held)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		res, dst := b.lookupAsync(ctx, l, held)
		if !b.await(g.Held) {
			cancel()
			b.r.Fatalf("%s: not held inside the store within %v", held.label, b.h.Wait)
		}
		cancel()
		r, ok := b.lookupReturned(res)
		b.hook("Gate.Release", g.Release)
		if !ok {
			b.r.Errorf("%s: did not return within %v once its context ended, its call held inside the store", held.label, b.h.Wait)
			if _, ok = b.lookupReturned(res); !ok {
				b.hung = true
				b.r.Fatalf("%s: did not return within %v once its context ended and the store let it go", held.label, b.h.Wait)
			}
		} else {
			b.heldAnswer(held, dst, r)
		}
	} else {
		b.note("a lookup abandoned at its context's end: the harness has no HoldLookups hook")
	}
	b.answered(l, b.probe(b.rowName("after-0")))
	if b.canStage() {
		b.moveRow(b.region(1), 0)
	}
	if !b.drain(false) {
		b.r.Errorf("Drain returned false with every operation settled and every lookup let go")
	}
}

// checkLookupInFlight leaves two puts of the driver unstarted (the Pause
// hook), one of one row and one of two (one under a row cap of one),
// and asks about their names beside a name stored whole and one never
// stored: a put admitted is being written by this driver, whether a
// worker took its rows or not, so with LookupInFlight each reads
// InFlight; without it, anything but Present. The stored name and the
// one never stored read neither InFlight (nothing writes them) nor the
// opposite of their truth. Then the first put is cancelled (with
// Cancel) and the other let run to Ready: once a put ended nothing
// writes its names, so none reads InFlight, and those whose put ended
// Ready read Present.
func checkLookupInFlight(b *bench) {
	l := b.looker()
	b.needDir(PutDir)
	if b.sub.Pause == nil {
		b.skip(skipHook, "the check leaves puts unstarted: the harness has no Pause hook")
	}
	stored, never := b.rowName("stored"), b.rowName("never-stored")
	b.stage(stored, payload(stored, int(b.h.SlotBytes)), true)
	n := b.capRows(2)
	a := b.region(1 + n)
	resume := b.pause()
	var q []string
	data := map[string][]byte{}
	for i := range 1 + n {
		name := b.rowName(fmt.Sprintf("queued-%d", i))
		q = append(q, name)
		data[name] = payload(name, int(b.h.SlotBytes))
		b.fill(a, i, data[name])
	}
	first := b.admit(PutDir, b.batch(row(q[0], a.span(0))), nil, nil)
	second := b.batch()
	for i, name := range q[1:] {
		second.Rows = append(second.Rows, row(name, a.span(1+i)))
	}
	rest := b.admit(PutDir, second, nil, nil)
	queued := map[string]bool{}
	for _, name := range q {
		queued[name] = true
	}
	p := b.probe(append([]string{q[0], stored, never}, q[1:]...)...)
	for i, x := range b.answered(l, p) {
		switch name := p.names[i]; {
		case queued[name] && x == contract.Present:
			b.r.Errorf("%s: %s reads present while this driver's put of it is admitted and not yet taken by a worker (the Pause hook): a key this driver is putting is never Present before its put is Ready", p.label, p.name(i))
		case queued[name] && b.caps.LookupInFlight && x != contract.InFlight:
			b.r.Errorf("%s: %s reads %v while this driver's put of it is admitted and not yet taken by a worker (the Pause hook), want in-flight: with LookupInFlight every name being written reads InFlight, a put no worker took yet included", p.label, p.name(i), x)
		case name == stored && (x == contract.InFlight || x == contract.Absent):
			b.r.Errorf("%s: %s reads %v beside names this driver's queued puts are writing, yet its object was stored whole and nothing writes it", p.label, p.name(i), x)
		case name == never && (x == contract.InFlight || x == contract.Present):
			b.r.Errorf("%s: %s reads %v beside names this driver's queued puts are writing, yet the name was never stored and nothing writes it: InFlight is never answered for a name no one writes", p.label, p.name(i), x)
		}
	}

	var cancelled []contract.RowStatus
	if b.caps.Cancel {
		if ok, pan := b.call("Cancel", first.operation().Cancel); ok && pan != nil {
			b.r.Errorf("%s: Cancel panicked: %v", first.label, pan)
		}
		cancelled = first.settle().Rows
		one := b.probe(q[0])
		switch x := b.answered(l, one)[0]; x {
		case contract.InFlight:
			b.r.Errorf("%s: %s reads in-flight, yet its put was cancelled before any worker took it (ended %v) and nothing writes it: InFlight is never answered for a name no one writes", one.label, one.name(0), cancelled)
		case contract.Present:
			b.readsWhole(one, 0, data[q[0]], fmt.Sprintf("its put was cancelled before any worker took it and ended %v", cancelled))
		}
	} else {
		b.note("a queued put cancelled, then asked about: the driver does not declare Cancel")
	}
	b.hook("resume", resume)
	ws := []*watch{rest}
	if cancelled == nil {
		ws = append(ws, first)
	}
	for _, w := range ws {
		if !w.expect(w.settle(), "the put was let run once the workers took rows again", contract.Ready) {
			return
		}
	}
	after := b.probe(append(q[1:], q[0])...)
	for i, x := range b.answered(l, after) {
		name := after.names[i]
		switch {
		case name == q[0] && cancelled != nil && x == contract.InFlight:
			b.r.Errorf("%s: %s reads in-flight, yet its put ended %v and nothing writes it: InFlight is never answered for a name no one writes", after.label, after.name(i), cancelled)
		case name == q[0] && cancelled != nil && x == contract.Present:
			b.readsWhole(after, i, data[name], fmt.Sprintf("its put was cancelled before any worker took it and ended %v", cancelled))
		case (name != q[0] || cancelled == nil) && x != contract.Present:
			b.r.Errorf("%s: %s reads %v, want present: this driver's put of it ended Ready and nothing writes it", after.label, after.name(i), x)
		}
	}
}
