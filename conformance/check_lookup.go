package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/kvshare/kvshare/contract"
)

// The lookup checks hold a driver that implements contract.Looker to its
// rules; a driver without it skips each, saying so.

// checkLookupCount asks about batches of 1, 3 and 10 names never stored,
// each into a dst of every shape: nil, room for every name with an entry
// already in it, too small. Each answer is held to one Presence per
// name, appended to dst[:0] (the dst given, when it has room); the
// previous answer, kept by the suite, must still read as it was
// returned.
func checkLookupCount(b *bench) {
	l := b.looker()
	var last, lastCopy []contract.Presence
	var lastLabel string
	for i, n := range []int{1, 3, 10} {
		names := make([]string, n)
		for j := range names {
			names[j] = b.rowName(fmt.Sprintf("count%d-%d", i, j))
		}
		p := b.probe(names...)
		for _, dst := range [][]contract.Presence{nil, staleDst(n), make([]contract.Presence, 0, n-1)} {
			ctx, cancel := b.bound()
			got, err := b.lookupInto(ctx, l, p, dst)
			cancel()
			switch {
			case errors.Is(err, errLookupPanicked):
				continue
			case err != nil:
				b.r.Errorf("%s: refused (%v): a lookup of distinct names, each with a key, before any Drain is answered", p.label, err)
				continue
			}
			if last != nil && !slices.Equal(last, lastCopy) {
				b.r.Errorf("%s: the answer Lookup returned changed after it returned (%v, now %v): the presences belong to the caller, and the driver never keeps dst", lastLabel, lastCopy, last)
			}
			last, lastCopy, lastLabel = got, slices.Clone(got), p.label
		}
	}
}

// checkLookupRefusals sends lookups no driver can ask about, then, after
// a Drain, one it could: each must be refused with ErrDriverRejected.
// With the HoldLookups hook every key of the check is held first, so
// that a refused lookup that asked the store anyway stays inside it, and
// the Drain after the refusals, which must answer true, shows it.
func checkLookupRefusals(b *bench) {
	l := b.looker()
	a, c := b.rowName("a"), b.rowName("c")
	long := b.rowName(strings.Repeat("x", 300)) // the suite's key maker has no key for it
	ten := make([]string, 10)
	for i := range ten {
		ten[i] = b.rowName(fmt.Sprintf("ten-%d", i))
	}
	ten[8] = ten[1]
	cases := []struct {
		what  string
		batch contract.LookupBatch
	}{
		{"no key maker (Keys nil)", contract.LookupBatch{Names: [][]byte{[]byte(a)}}},
		{"an empty name", b.probe(a, "").batch},
		{"a name the key maker has no key for", b.probe(a, long).batch},
		{"a name twice", b.probe(a, c, a).batch},
		{"a name again in a batch of 10 names", b.probe(ten...).batch},
	}
	held := b.sub.HoldLookups != nil
	if held {
		b.holdLookups(b.probe(append(append([]string{a, c}, ten[:8]...), ten[9])...))
	} else {
		b.note("a refused lookup that asked the store anyway goes unseen: the harness has no HoldLookups hook to hold it there")
	}
	for _, tc := range cases {
		b.refuseLookup(l, tc.batch, tc.what, "a lookup the driver cannot ask about is refused, and asks nothing")
	}
	if !b.drain(false) {
		why := "nothing was admitted"
		if held {
			why = "a refused lookup that asked the store anyway is held inside it: a refusal asks nothing"
		}
		b.r.Errorf("Drain returned false after refused lookups only: %s", why)
	}
	b.refuseLookup(l, b.probe(a, c).batch, "after a Drain", "after a Drain every lookup is refused, and asks nothing")
	if held && !b.drain(false) {
		b.r.Errorf("Drain returned false after a lookup refused after a Drain: a lookup after Drain is refused and asks nothing, yet one is held inside the store")
	}
}

// refuseLookup makes a lookup that must be refused with an error
// wrapping ErrDriverRejected.
func (b *bench) refuseLookup(l contract.Looker, batch contract.LookupBatch, what, why string) {
	b.r.Helper()
	ctx, cancel := b.bound()
	defer cancel()
	b.refuseLookupWithin(ctx, l, batch, what, why)
}

// refuseLookupWithin is refuseLookup with a context of the caller's: a
// brief one where a lookup that asked the store anyway would block
// inside it.
func (b *bench) refuseLookupWithin(ctx context.Context, l contract.Looker, batch contract.LookupBatch, what, why string) {
	b.r.Helper()
	label := fmt.Sprintf("lookup of %d names (%s)", len(batch.Names), what)
	p := b.probeOf(batch, label)
	var err error
	_, pan := b.call(label+": Lookup", func() { _, err = b.lendLookup(ctx, l, p, batch, staleDst(len(batch.Names))) })
	switch {
	case pan != nil:
		b.r.Errorf("%s: Lookup panicked: %v: a lookup refuses what it cannot ask about, never panics", label, pan)
	case err == nil:
		b.r.Errorf("%s: answered, want refused with ErrDriverRejected: %s", label, why)
	case !isRejected(err):
		b.r.Errorf("%s: refused with an error that does not wrap ErrDriverRejected: %v", label, err)
	}
}

// checkLookupAbsent asks about names never stored: none may read
// Present, nor InFlight (nothing writes them).
func checkLookupAbsent(b *bench) {
	l := b.looker()
	p := b.probe(b.rowName("never-stored-0"), b.rowName("never-stored-1"), b.rowName("never-stored-2"))
	for i, x := range b.answered(l, p) {
		if x == contract.Present || x == contract.InFlight {
			b.r.Errorf("%s: %s reads %v, want absent or unknown: the name was never stored, so no object has its key and nothing writes it", p.label, p.name(i), x)
		}
	}
}

// checkLookupPresent stores one object through a put of the driver's
// (Seed without Put) and one through the Seed hook (a put without it),
// and asks about both with a name never stored last: both Present, in
// batch order, the last not.
func checkLookupPresent(b *bench) {
	l := b.looker()
	if !b.canStage() {
		b.skip(skipHook, "the check needs objects in the store: the driver does not put and the harness has no Seed hook")
	}
	p := b.probe(b.rowName("stored-0"), b.rowName("stored-1"), b.rowName("never-stored-2"))
	how := make([]string, 2)
	for i, viaPut := range []bool{true, false} {
		b.stage(p.names[i], payload(p.names[i], int(b.h.SlotBytes)), viaPut)
		how[i] = "another writer stored it whole (the Seed hook)"
		if b.caps.Put && (viaPut || b.sub.Seed == nil) {
			how[i] = "a put of the driver stored it and ended Ready"
		}
	}
	got := b.answered(l, p)
	for i := range 2 {
		if got[i] != contract.Present {
			b.r.Errorf("%s: %s reads %v, want present: %s, and presences come in batch order", p.label, p.name(i), got[i], how[i])
		}
	}
	if got[2] == contract.Present {
		b.r.Errorf("%s: %s reads present, yet the name was never stored: presences come in batch order, Present only for a complete object", p.label, p.name(2))
	}
}

// checkLookupWriterHoldsKey stages another writer on two keys: neither
// may read Present while it writes them (InFlight, with LookupInFlight).
// Then one is finished, the other abandoned: the first must read
// Present, the second neither Present nor InFlight.
func checkLookupWriterHoldsKey(b *bench) {
	l := b.looker()
	if b.sub.Writing == nil {
		b.skip(skipHook, "the harness cannot stage another writer (no Writing hook)")
	}
	p := b.probe(b.rowName("being-written-0"), b.rowName("being-written-1"))
	finish := make([]func([]byte), 2)
	for i, key := range b.keysOf(p) {
		b.hook("Writing", func() { finish[i] = b.sub.Writing(key) })
		if finish[i] == nil {
			b.r.Fatalf("the Writing hook returned no finish function")
		}
		b.undo = append(b.undo, func() { finish[i](nil) })
	}
	for i, x := range b.answered(l, p) {
		switch {
		case x == contract.Present:
			b.r.Errorf("%s: %s reads present while another writer still writes its key (the object not readable yet): %s", p.label, p.name(i), b.presentMeans())
		case b.caps.LookupInFlight && x != contract.InFlight:
			b.r.Errorf("%s: %s reads %v while another writer writes its key, want in-flight: the driver declares LookupInFlight", p.label, p.name(i), x)
		}
	}
	theirs := payload(p.names[0]+"/theirs", int(b.h.SlotBytes))
	b.hook("finish", func() { finish[0](theirs) })
	b.hook("finish", func() { finish[1](nil) })
	got := b.answered(l, p)
	if got[0] != contract.Present {
		b.r.Errorf("%s: %s reads %v, want present: the other writer finished the object", p.label, p.name(0), got[0])
	}
	if got[1] == contract.Present || got[1] == contract.InFlight {
		b.r.Errorf("%s: %s reads %v, want absent or unknown: the other writer abandoned the object, so nothing stands behind its key and nothing writes it", p.label, p.name(1), got[1])
	}
}

// checkLookupOwnPut holds a put of the driver inside the store and asks
// about its key: not Present (InFlight, with LookupInFlight); once the
// put ended Ready, Present.
func checkLookupOwnPut(b *bench) {
	l := b.looker()
	b.needDir(PutDir)
	if b.sub.Hold == nil {
		b.skip(skipHook, "the harness cannot hold a put inside the store (no Hold hook)")
	}
	a := b.region(1)
	m := b.rows(PutDir, a, []int{0}, "own", false)
	p := b.probe(string(m.batch.Rows[0].Name))
	g := b.hold(PutDir)
	w := b.admit(PutDir, m.batch, nil, nil)
	if !b.await(g.Held) {
		b.r.Fatalf("%s: no row was held inside the store within %v", w.label, b.h.Wait)
	}
	switch x := b.answered(l, p)[0]; {
	case x == contract.Present:
		b.r.Errorf("%s: %s reads present while this driver's own put of it (%s) is held inside the store: a key this driver is putting is never Present before its put is Ready", p.label, p.name(0), w.label)
	case b.caps.LookupInFlight && x != contract.InFlight:
		b.r.Errorf("%s: %s reads %v while this driver's own put of it (%s) is held inside the store, want in-flight: the driver declares LookupInFlight", p.label, p.name(0), x, w.label)
	}
	b.hook("Gate.Release", g.Release)
	st := w.settle()
	if !w.expect(st, "the held put was let go", contract.Ready) {
		return
	}
	if x := b.answered(l, p)[0]; x != contract.Present {
		b.r.Errorf("%s: %s reads %v, want present: this driver's own put of it ended Ready", p.label, p.name(0), x)
	}
}

// checkLookupWhole stores one object whole, then crashes the store call
// of a put of another key (the Crash hook), and asks about both: every
// name that reads Present must be read whole by a get made right after
// (the Object hook without Get), or, with PresenceFromIndex, that get
// may end Fault. A crashed put may have left its object whole, which may
// read Present; not a torn one, nor none at all.
func checkLookupWhole(b *bench) {
	l := b.looker()
	b.needDir(PutDir)
	if b.sub.Crash == nil {
		b.skip(skipHook, "the check crashes a put to leave a torn object: the harness has no Crash hook")
	}
	if !b.canReadBack() {
		b.skip(skipHook, "the check reads back what reads present: the driver does not get and the harness has no Object hook")
	}
	p := b.probe(b.rowName("whole"), b.rowName("crashed"))
	data := [][]byte{payload(p.names[0], int(b.h.SlotBytes)), payload(p.names[1], int(b.h.SlotBytes))}
	b.stage(p.names[0], data[0], true)
	a := b.region(1)
	b.fill(a, 0, data[1])
	b.hook("Crash", func() { b.sub.Crash(PutDir) })
	w := b.admit(PutDir, b.batch(row(p.names[1], a.span(0))), nil, nil)
	st := w.settle()
	why := []string{
		"a put of the driver stored it and ended Ready",
		fmt.Sprintf("the put of it crashed inside the store and ended %v, which may leave a whole object, a torn one or none", st.Rows),
	}
	for i, x := range b.answered(l, p) {
		if x == contract.Present {
			b.readsWhole(p, i, data[i], why[i])
		}
	}
}

// checkLookupDeadline holds the lookup of two names inside the store
// (the HoldLookups hook) with a context the suite cancels once it is
// held. While it is inside, before and after its context ended, Drain
// (its context ending while it waits) must answer false and Close be
// refused;
// once its context ended it must return, within Wait, Unknown for both;
// once the gate is let go, Drain must answer true.
func checkLookupDeadline(b *bench) {
	l := b.looker()
	if b.sub.HoldLookups == nil {
		b.skip(skipHook, "the harness cannot hold a lookup inside the store (no HoldLookups hook)")
	}
	p := b.probe(b.rowName("held-0"), b.rowName("held-1"))
	g := b.holdLookups(p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, dst := b.lookupAsync(ctx, l, p)
	if !b.await(g.Held) {
		cancel()
		b.r.Fatalf("%s: not held inside the store within %v", p.label, b.h.Wait)
	}
	b.insideStore(p, "held inside the store, its context not yet ended")
	cancel()
	r, ok := b.lookupReturned(res)
	if !ok {
		b.r.Errorf("%s: did not return within %v once its context ended, its call held inside the store: a lookup answers within its context (what the store did not answer is Unknown) and may abandon the call", p.label, b.h.Wait)
		b.hook("Gate.Release", g.Release)
		if _, ok = b.lookupReturned(res); !ok {
			b.hung = true
			b.r.Fatalf("%s: did not return within %v once its context ended and the store let it go", p.label, b.h.Wait)
		}
	} else {
		b.heldAnswer(p, dst, r)
		b.insideStore(p, "abandoned at its context's end, its call still held inside the store")
		b.hook("Gate.Release", g.Release)
	}
	if b.closed {
		return
	}
	if !b.drain(false) {
		b.r.Errorf("Drain, its context with %v left, returned false once the held lookup was let go, with nothing else admitted: the lookup's call ended", b.h.Wait)
	}
}

// insideStore holds Drain and Close to a lookup inside the store: Drain,
// its context with Wait left and ending the moment Drain looks at it
// (so that a driver whose Drain answers false at once for a context
// already ended is asked too), answers false; Close is refused.
func (b *bench) insideStore(p probe, state string) {
	b.r.Helper()
	if b.closed {
		return
	}
	if ok, _ := b.drainEnding(); ok {
		b.r.Errorf("%s: Drain returned true while the lookup was %s: Drain answers false while any lookup is inside the store (an abandoned call still uses the store's client)", p.label, state)
	}
	if b.closeNow() == nil {
		b.r.Errorf("%s: Close succeeded while the lookup was %s: Close is refused until no lookup is inside the store (no call may run on a destroyed handle)", p.label, state)
	}
}

// heldAnswer holds the answer of a lookup whose context ended while its
// call was held inside the store: no error, every name Unknown.
func (b *bench) heldAnswer(p probe, dst []contract.Presence, r lookupResult) {
	b.r.Helper()
	switch {
	case r.panicked != nil:
		b.r.Errorf("%s: Lookup panicked: %v: a lookup answers or refuses, never panics", p.label, r.panicked)
		return
	case r.err != nil:
		b.r.Errorf("%s: returned an error once its context ended, its call held inside the store (%v): a lookup answers within its context, Unknown for what the store did not answer", p.label, r.err)
		return
	}
	b.answerRules(p, dst, r.got)
	for i, x := range r.got {
		if x != contract.Unknown && i < len(p.names) {
			b.r.Errorf("%s: %s reads %v, want unknown: its call was held inside the store when the lookup's context ended, so the store never answered", p.label, p.name(i), x)
		}
	}
}

// Lookups of the concurrent check: from this many goroutines, each at
// least this many times (and on until the puts and gets beside them
// settled).
const (
	lookupGoroutines = 3
	lookupRounds     = 4
)

// checkLookupConcurrent stores objects under some names (the Seed hook,
// else puts), then looks up those and fresh names from several
// goroutines while a put of the fresh names and a get of the stored ones
// run beside them. A stored name must never read Absent or InFlight; a
// name that read Present must be read whole by a get made after. Then,
// with the HoldLookups hook, a lookup held inside the store must hold up
// no Put, Get or Poll: a put and a get are admitted and settle while it
// is held.
func checkLookupConcurrent(b *bench) {
	l := b.looker()
	if !b.canStage() {
		b.skip(skipHook, "the check needs objects in the store: the driver does not put and the harness has no Seed hook")
	}
	n := b.capRows(2)
	var names []string
	data := map[string][]byte{}
	for i := range 2 * n {
		tag := "stored"
		if i >= n {
			tag = "fresh"
		}
		name := b.rowName(fmt.Sprintf("%s-%d", tag, i%n))
		names = append(names, name)
		data[name] = payload(name, int(b.h.SlotBytes))
		if i < n {
			b.stage(name, data[name], false)
		}
	}
	p := b.probe(names...)
	a := b.region(2 * n)
	var ws []*watch
	var gets *moving

	stop := make(chan struct{})
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop) }) }
	defer halt() // a check that ends early stops the lookups too
	answers := make([][][]contract.Presence, lookupGoroutines)
	failures := make([][]string, lookupGoroutines)
	var wg sync.WaitGroup
	for g := range lookupGoroutines {
		wg.Go(func() {
			for round := 0; ; round++ {
				if round >= lookupRounds {
					select {
					case <-stop:
						return
					default:
					}
				}
				ctx, cancel := b.bound()
				var got []contract.Presence
				var err error
				func() {
					defer func() {
						if x := recover(); x != nil {
							err = fmt.Errorf("panicked: %v", x)
						}
					}()
					got, err = b.lendLookup(ctx, l, p, p.batch, nil)
				}()
				cancel()
				if err != nil {
					failures[g] = append(failures[g], err.Error())
					return
				}
				answers[g] = append(answers[g], got)
			}
		})
	}
	if b.caps.Put {
		m := moving{a: a, slots: seq(n), batch: b.batch()}
		for i, name := range names[n:] {
			b.fill(a, i, data[name])
			m.batch.Rows = append(m.batch.Rows, row(name, a.span(i)))
		}
		ws = append(ws, b.admit(PutDir, m.batch, nil, nil))
	}
	if b.caps.Get {
		m := moving{a: a, batch: b.batch()}
		for i, name := range names[:n] {
			m.slots = append(m.slots, n+i)
			m.data = append(m.data, data[name])
			m.batch.Rows = append(m.batch.Rows, row(name, a.span(n+i)))
		}
		gets = &m
		ws = append(ws, b.admit(GetDir, m.batch, nil, nil))
	}
	for _, w := range ws {
		st := w.settle()
		if w.dir == GetDir {
			w.expect(st, "a get of a stored object beside lookups", contract.Ready)
			gets.landed(b, w, st)
		}
	}
	halt()
	if ok, _ := b.within(wg.Wait); !ok {
		b.hung = true
		b.r.Fatalf("%s, from %d goroutines beside a put and a get: the lookups did not all return within %v", p.label, lookupGoroutines, b.h.Wait)
	}
	b.untouched("a lookup lends no memory", contract.Span{Addr: a.region.Base, Len: a.region.Len})

	present := make([]bool, len(names))
	reported := make([]bool, len(names))
	for g := range lookupGoroutines {
		for _, f := range failures[g] {
			b.r.Errorf("%s, from a goroutine beside a put and a get: Lookup failed (%s): Lookup is safe for concurrent use with itself, Put, Get and Poll, and answers a batch it can ask about", p.label, f)
		}
		for _, got := range answers[g] {
			if len(got) != len(names) {
				b.r.Errorf("%s, from a goroutine beside a put and a get: Lookup returned %d presences: Lookup appends exactly one Presence per name", p.label, len(got))
				continue
			}
			for i, x := range got {
				present[i] = present[i] || x == contract.Present
				if i < n && !reported[i] && (x == contract.Absent || x == contract.InFlight) {
					reported[i] = true
					b.r.Errorf("%s, from a goroutine beside a put and a get: %s reads %v, yet its object was stored whole before the lookups began: Absent means no object has the key", p.label, p.name(i), x)
				}
			}
		}
	}
	for i := n; i < len(names); i++ {
		if !present[i] {
			continue
		}
		if !b.canReadBack() {
			b.note("%s: %s read present beside its put, and is not read back: the driver does not get and the harness has no Object hook", p.label, p.name(i))
			continue
		}
		b.readsWhole(p, i, data[names[i]], "a lookup beside its put read it present")
	}
	lookupBesideWork(b, l, a, names[:n], data)
}

// lookupBesideWork holds a lookup of a name never stored inside the
// store (the HoldLookups hook) and, while it is held, its context alive,
// admits a put of a fresh name and a get of a stored one and waits for
// both to settle: a lookup blocked in the store holds up none of Put,
// Get and Poll.
func lookupBesideWork(b *bench, l contract.Looker, a *arena, stored []string, data map[string][]byte) {
	b.r.Helper()
	if b.sub.HoldLookups == nil {
		b.note("a lookup held inside the store beside a put and a get: the harness has no HoldLookups hook")
		return
	}
	p := b.probe(b.rowName("held"))
	g := b.holdLookups(p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, _ := b.lookupAsync(ctx, l, p)
	if !b.await(g.Held) {
		b.r.Fatalf("%s: not held inside the store within %v", p.label, b.h.Wait)
	}
	b.during = "a lookup is held inside the store meanwhile: a lookup blocked in the store holds up no Put, Get or Poll"
	if b.caps.Put {
		name := b.rowName("beside")
		b.write(a, a.span(0), payload(name, int(b.h.SlotBytes)))
		w := b.admit(PutDir, b.batch(row(name, a.span(0))), nil, nil)
		w.expect(w.settle(), "a put of a fresh key beside a lookup held inside the store", contract.Ready)
	}
	if b.caps.Get {
		w := b.admit(GetDir, b.batch(row(stored[0], a.span(len(stored)))), nil, nil)
		st := w.settle()
		w.expect(st, "a get of a stored object beside a lookup held inside the store", contract.Ready)
		if off, bad := firstDiff(a.slot(len(stored)), data[stored[0]]); len(st.Rows) > 0 && st.Rows[0] == contract.Ready && bad {
			b.r.Errorf("%s: row 0 (%s) ended ready but its slot differs from the object at byte %d", w.label, w.row(0), off)
		}
	}
	b.during = ""
	cancel()
	b.hook("Gate.Release", g.Release)
	if _, ok := b.lookupReturned(res); !ok {
		b.hung = true
		b.r.Fatalf("%s: did not return within %v once its context ended and the store let it go", p.label, b.h.Wait)
	}
}
