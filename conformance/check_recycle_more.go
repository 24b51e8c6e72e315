package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kvshare/kvshare/contract"
)

// The recycle checks of what a single unprovable row cannot show:
// several transfers abandoned in one operation, the order of Recycle's
// callbacks against the change they report, a Recycle that gives up
// beside an Unprovable operation, work after a Drain and a Recycle, and
// the calls made while a Recycle waits.

// unprovableRows admits a get of n rows (tag-0, tag-1, …) over a region
// of n slots of its own, each of which the UnprovableGets hook leaves
// unprovable, and waits for it to settle so; prep sees the watch before
// the driver does. With stage, each row's object is stored first, so
// that the transfer the store gives up on has something to land. It
// skips without Get or the hook.
func (b *bench) unprovableRows(tag string, n int, stage bool, prep func(*watch)) (*arena, *watch) {
	b.r.Helper()
	b.needDir(GetDir)
	if b.sub.UnprovableGets == nil {
		b.skip(skipHook, "the harness cannot stage an unprovable get (no UnprovableGets hook)")
	}
	names := make([]string, n)
	for i := range names {
		names[i] = b.rowName(fmt.Sprintf("%s-%d", tag, i))
		if stage {
			b.stage(names[i], payload(names[i], int(b.h.SlotBytes)), false)
		}
	}
	a := b.region(n)
	get := b.batch()
	for i, name := range names {
		get.Rows = append(get.Rows, row(name, a.span(i)))
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = get.Key(i)
	}
	b.hook("UnprovableGets", func() { b.sub.UnprovableGets(keys...) })
	w := b.admit(GetDir, get, nil, prep)
	if st := w.settle(); st.Access != contract.Unprovable {
		b.r.Fatalf("%s: the harness staged an unprovable get of every row, yet access ended %v", w.label, st.Access)
	}
	return a, w
}

// recycledAll calls Recycle with Wait left and ends the check when it
// does not end every access: nothing is inside the store, so only a
// broken Recycle fails.
func (b *bench) recycledAll(w *watch) {
	b.r.Helper()
	ctx, cancel := b.bound()
	defer cancel()
	if err := b.recycle(ctx); err != nil && !errors.Is(err, contract.ErrRecycledClosed) {
		b.r.Fatalf("%s: Recycle with no row inside the store failed: %v", w.label, err)
	}
}

// checkRecycleEndsEveryTransfer stages one Unprovable get of several
// rows, each leaving a transfer the store gave up on, recycles, and lets
// the transfers run to their end: a Recycle that stopped only some of
// them has the others write memory whose access it reported ended,
// which the next driver call's look at the sealed memory reports.
func checkRecycleEndsEveryTransfer(b *bench) {
	b.recycler()
	b.needDir(GetDir)
	n := b.capRows(3)
	switch {
	case b.sub.UnprovableGets == nil:
		b.skip(skipHook, "the harness cannot stage an unprovable get (no UnprovableGets hook)")
	case n < 2:
		b.skip(skipCapability, "the check needs an operation of several rows, and MaxRowsPerOp is %d", b.caps.MaxRowsPerOp)
	case b.sub.FinishStrays == nil:
		b.skip(skipHook, "the check lets the transfers the store gave up on run to their end after Recycle: the harness has no FinishStrays hook")
	case !b.canStage():
		b.skip(skipHook, "the transfers the store gives up on need objects to land: the driver does not put and the harness has no Seed hook")
	}
	a, w := b.unprovableRows("abandoned", n, true, nil)
	b.recycledAll(w)
	b.finishStrays()
	if !b.drain(false) {
		b.r.Errorf("%s: Drain after a Recycle that ended every access returned false", w.label)
	}
	if err := b.unregister(b.lendingOf(a)); err != nil {
		b.r.Errorf("%s: Unregister of region %s after a Recycle ended the access covering it: %v", w.label, a.label, err)
	}
}

// announcements records, for the operations it follows, what a Poll
// from inside each onChange call made while on is set read: every
// onChange call polls from inside before it runs inCallback (see
// watch.onChange), so the watch's latest snapshot then is what the
// callback could see.
type announcements struct {
	on   atomic.Bool
	mu   sync.Mutex
	seen map[*watch][]contract.OpState
}

// follow is a prep for admit: the operation's callbacks are recorded.
func (an *announcements) follow(w *watch) {
	w.inCallback = func(op contract.Operation) {
		if op == nil || !an.on.Load() {
			return
		}
		st := w.latest()
		an.mu.Lock()
		defer an.mu.Unlock()
		if an.seen == nil {
			an.seen = map[*watch][]contract.OpState{}
		}
		an.seen[w] = append(an.seen[w], st)
	}
}

// judge holds the callbacks of w recorded while on to the change a
// Recycle made: once it returned, w reads after, and if that differs
// from before, some callback made meanwhile must have seen it.
func (an *announcements) judge(b *bench, w *watch, before contract.OpState) {
	b.r.Helper()
	after := w.latest()
	if sameState(before, after) {
		return
	}
	an.mu.Lock()
	seen := slices.Clone(an.seen[w])
	an.mu.Unlock()
	if len(seen) == 0 {
		b.r.Errorf("%s: Recycle changed the operation (access %v, rows %v, to access %v, rows %v) and returned without calling its onChange: it calls onChange for each operation it changed before it returns",
			w.label, before.Access, before.Rows, after.Access, after.Rows)
		return
	}
	if slices.ContainsFunc(seen, func(st contract.OpState) bool { return sameState(st, after) }) {
		return
	}
	last := seen[len(seen)-1]
	b.r.Errorf("%s: Recycle called the operation's onChange %d time(s), each before the change it reports was visible: a Poll from inside the last read access %v (rows %v), and the operation reads access %v (rows %v) once Recycle returned: a callback follows the change it reports",
		w.label, len(seen), last.Access, last.Rows, after.Access, after.Rows)
}

func sameState(x, y contract.OpState) bool {
	return x.Access == y.Access && slices.Equal(x.Rows, y.Rows)
}

// checkRecycleCallbacksAfterChange recycles two Unprovable operations
// (and, with the Pause hook, one whose rows no worker took, which
// Recycle ends Cancelled), recording what a Poll from inside each
// onChange call made meanwhile read: the change each operation shows
// once Recycle returned must have been visible to one of them.
func checkRecycleCallbacksAfterChange(b *bench) {
	b.recycler()
	an := &announcements{}
	_, u1 := b.unprovableRows("unprovable-a", 1, b.canStage(), an.follow)
	_, u2 := b.unprovableRows("unprovable-b", 1, b.canStage(), an.follow)
	ws := []*watch{u1, u2}
	if b.sub.Pause != nil {
		dir := b.dirs()[0]
		m := b.seeded(dir, b.region(1), []int{0}, "queued")
		b.pause()
		ws = append(ws, b.admit(dir, m.batch, nil, an.follow))
	} else {
		b.note("the callback for the rows a Recycle ends Cancelled is not held to the change it reports: the harness has no Pause hook")
	}
	before := make([]contract.OpState, len(ws))
	for i, w := range ws {
		before[i] = w.latest()
	}
	an.on.Store(true)
	ctx, cancel := b.bound()
	defer cancel()
	err := b.recycle(ctx)
	an.on.Store(false)
	if err != nil && !errors.Is(err, contract.ErrRecycledClosed) {
		b.r.Fatalf("%s: Recycle with no row inside the store failed: %v", u1.label, err)
	}
	for i, w := range ws {
		an.judge(b, w, before[i])
	}
	b.finishStrays()
	if !b.drain(false) {
		b.r.Errorf("Drain after a Recycle that ended every access returned false")
	}
}

// heldDir is the direction a recycle check holds a row of inside the
// store in: a put when the driver puts (nothing to stage), else a get.
func (b *bench) heldDir() Direction {
	if b.serves(PutDir) {
		return PutDir
	}
	return GetDir
}

// checkRecycleGivesUp makes a Recycle give up, an operation Unprovable
// and a row held inside the store (and, with the Pause hook, rows no
// worker took): its context ends the moment it first looks at it. The
// Unprovable operation must stay so, the held row keep running and end
// with the store's verdict, the driver take work again through regions
// registered before, and a later Recycle with time end the operation.
func checkRecycleGivesUp(b *bench) {
	b.recycler()
	switch {
	case b.sub.Hold == nil:
		b.skip(skipHook, "the check needs a row held inside the store while Recycle waits: the harness has no Hold hook")
	case !b.canStage():
		b.skip(skipHook, "the check moves rows both ways after the Recycle: the driver does not put and the harness has no Seed hook")
	}
	_, u := b.unprovableRows("unprovable", 1, true, nil)
	dir := b.heldDir()
	busy := b.region(2)
	held := b.seeded(dir, busy, []int{0}, "held")
	queued := b.seeded(dir, busy, []int{1}, "queued")
	calm := b.region(2)
	g := b.hold(dir)
	hw := b.admit(dir, held.batch, nil, nil)
	if !b.await(g.Held) {
		b.r.Fatalf("%s: no row was held inside the store within %v", hw.label, b.h.Wait)
	}
	var qw *watch
	var resume func()
	if b.sub.Pause != nil {
		resume = b.pause()
		qw = b.admit(dir, queued.batch, nil, nil)
	}

	ctx, cancel := b.bound()
	err := b.recycle(&consulted{Context: ctx, onConsult: cancel})
	cancel()
	if err == nil || errors.Is(err, contract.ErrRecycledClosed) {
		b.r.Fatalf("%s: Recycle returned %v while a row was held inside the store and its context had ended: it tears down only once the rows inside the store returned, and gives up with ErrDriverRejected when its context ends first", hw.label, err)
	}
	if st := u.poll(); st.Access != contract.Unprovable {
		b.r.Errorf("%s: after a Recycle that gave up, the operation reads access %v: a Recycle that gives up leaves every Unprovable operation Unprovable", u.label, st.Access)
	}
	if st := hw.poll(); st.Access != contract.Open || st.Settled() {
		b.r.Errorf("%s: after a Recycle that gave up, the operation whose row is held inside the store reads rows %v, access %v: a row a worker took runs on and ends with the store's verdict; only rows no worker took may end Cancelled", hw.label, st.Rows, st.Access)
	}
	if qw != nil {
		qw.poll() // Pending, or Cancelled: both allowed
	}

	b.hook("Gate.Release", g.Release)
	if resume != nil {
		b.hook("resume", resume)
	}
	st := hw.settle()
	hw.expect(st, "the row held inside the store while a Recycle gave up keeps the store's verdict", contract.Ready)
	if dir == GetDir {
		held.landed(b, hw, st)
	}
	if qw != nil {
		st := qw.settle()
		qw.expect(st, "a row no worker took when Recycle gave up ends Cancelled, or runs once the driver takes work again", contract.Ready, contract.Cancelled)
	}
	for _, d := range b.dirs() {
		slot := 0
		if d == GetDir {
			slot = 1
		}
		m := b.seeded(d, calm, []int{slot}, "after-"+d.String())
		w := b.admit(d, m.batch, nil, nil)
		st := w.settle()
		w.expect(st, "a Recycle that gave up tore nothing down and takes work again: a row in a region registered before it moves", contract.Ready)
		if d == GetDir {
			m.landed(b, w, st)
		}
	}
	if st := u.poll(); st.Access != contract.Unprovable {
		b.r.Errorf("%s: the operation reads access %v after a Recycle gave up and work went on: only a Recycle's teardown ends an Unprovable access", u.label, st.Access)
	}
	b.recycledAll(u)
	b.finishStrays()
	if !b.drain(false) {
		b.r.Errorf("Drain after a Recycle that ended every access returned false")
	}
}

// checkRecycleAfterDrain drains (with an Unprovable operation when the
// harness can stage one, so the Drain answers false, as before a
// backend reclaims at shutdown), recycles, and asks for work: Put, Get
// and a lookup must still be refused. It then closes the driver and
// asks Recycle again, which must be refused.
func checkRecycleAfterDrain(b *bench) {
	rc := b.recycler()
	a := b.region(2)
	if b.serves(GetDir) && b.sub.UnprovableGets != nil {
		_, u := b.unprovableRows("unprovable", 1, b.canStage(), nil)
		if b.drain(true) {
			b.r.Errorf("%s: Drain returned true while the operation's access is unprovable", u.label)
		}
	} else if !b.drain(false) {
		b.r.Fatalf("Drain of an idle driver returned false")
	}
	ctx, cancel := b.bound()
	defer cancel()
	if err := b.recycle(ctx); err != nil && !errors.Is(err, contract.ErrRecycledClosed) {
		b.r.Fatalf("Recycle after a Drain, with no row inside the store, failed: %v", err)
	}
	why := "a Drain stops taking work for good: a Recycle after it takes none again"
	refused := b.refuseSpan("after-recycle", a.span(0), why)
	if l, ok := b.d.(contract.Looker); ok {
		b.refuseLookup(l, b.probe(b.rowName("after-recycle")).batch, "after a Drain and a Recycle", why)
	}
	if !b.drain(false) {
		b.r.Errorf("Drain after a Recycle that ended every access returned false")
	}
	b.refusedOnly(refused)
	for _, l := range b.lendings {
		if !l.revoked {
			if err := b.unregister(l); err != nil {
				b.r.Fatalf("Unregister of idle registration %d after a true Drain: %v", l.handle, err)
			}
		}
	}
	if err := b.closeNow(); err != nil {
		b.r.Fatalf("Close after a Drain that returned true, with every region unregistered: %v", err)
	}
	var err error
	if _, p := b.call("Recycle", func() { err = rc.Recycle(ctx) }); p != nil {
		b.r.Fatalf("Recycle after Close panicked: %v", p)
	}
	switch {
	case err == nil:
		b.r.Errorf("Recycle after Close returned nil: after Close, Recycle is refused with ErrDriverRejected")
	case !isRejected(err):
		b.r.Errorf("Recycle after Close failed with %v, which does not wrap ErrDriverRejected", err)
	}
}

// recycleResult is what a Recycle called aside returned.
type recycleResult struct {
	err      error
	panicked any
}

// recycleAside calls Recycle within ctx on a goroutine of its own, with
// every operation admitted so far allowed one change from Unprovable to
// Ended (see recycleBegin), and returns those operations and where its
// result comes. The check goes on calling the driver meanwhile; it
// waits for the result with recycleReturned.
func (b *bench) recycleAside(ctx context.Context) ([]*watch, <-chan recycleResult) {
	rc := b.recycler()
	ws := b.recycleBegin()
	out := make(chan recycleResult, 1)
	go func() {
		var r recycleResult
		func() {
			defer func() { r.panicked = recover() }()
			suiteCall(func() { r.err = rc.Recycle(ctx) })
		}()
		out <- r
	}()
	return ws, out
}

// recycleReturned waits, within Wait, for the result of a Recycle called
// aside, holds the operations admitted before it to that result (see
// recycleEnd), and returns it. A Recycle that does not return in time
// marks the driver hung and ends the check.
func (b *bench) recycleReturned(ws []*watch, result <-chan recycleResult) error {
	b.r.Helper()
	var r recycleResult
	if !b.await(func(ctx context.Context) error {
		select {
		case r = <-result:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}) {
		b.hung = true
		b.r.Fatalf("Recycle did not return within %v of the held row being let go", b.h.Wait)
	}
	if r.panicked != nil {
		b.r.Fatalf("Recycle panicked: %v", r.panicked)
	}
	b.recycleEnd(ws, r.err)
	return r.err
}

// duringRecycle is what the calls made while a Recycle waited answered.
type duringRecycle struct {
	refused  []*watch // Put and Get, refused or admitted
	admitted []*watch // those admitted
	lookup   error    // the lookup's error, errNotAsked when none was made
	register error
	regOf    string // the region Register was asked for
	unreg    error
	unregOf  string // the region Unregister was asked for
}

var errNotAsked = errors.New("conformance: not asked")

// callsDuring makes, while a Recycle waits, a Put and a Get over calm's
// slots, a lookup, a Register of extra and an Unregister of calm, and
// returns what each answered.
func (b *bench) callsDuring(calm, extra *arena) duringRecycle {
	b.r.Helper()
	c := duringRecycle{lookup: errNotAsked, regOf: extra.label, unregOf: calm.label}
	for _, dir := range b.dirs() {
		slot := 0
		if dir == GetDir {
			slot = 1
		}
		name := b.rowName("during-" + dir.String())
		if dir == PutDir {
			b.fill(calm, slot, payload(name, int(b.h.SlotBytes)))
		}
		w, err := b.submit(dir, b.batch(row(name, calm.span(slot))), nil, nil)
		c.refused = append(c.refused, w)
		if err == nil {
			c.admitted = append(c.admitted, w)
		}
	}
	if l, ok := b.d.(contract.Looker); ok {
		_, c.lookup = b.lookup(l, b.probe(b.rowName("during-lookup")))
	}
	_, c.register = b.register(extra)
	c.unreg = b.unregister(b.lendingOf(calm))
	return c
}

// report holds what the calls made during a Recycle answered to rule 1:
// each is refused with ErrDriverRejected.
func (c duringRecycle) report(b *bench) {
	b.r.Helper()
	const rule = "from the moment Recycle is called until it returns, Put, Get, lookups, Register and Unregister are refused with ErrDriverRejected"
	for _, w := range c.admitted {
		b.r.Errorf("%s: admitted while a Recycle ran, want refused: %s", w.label, rule)
	}
	for what, err := range map[string]error{
		"a lookup":                          c.lookup,
		"Register of region " + c.regOf:     c.register,
		"Unregister of region " + c.unregOf: c.unreg,
	} {
		switch {
		case errors.Is(err, errNotAsked), errors.Is(err, errLookupPanicked):
		case err == nil:
			b.r.Errorf("%s returned nil while a Recycle ran, want refused: %s", what, rule)
		case !isRejected(err):
			b.r.Errorf("%s, while a Recycle ran, failed with %v, which does not wrap ErrDriverRejected", what, err)
		}
	}
}

// checkRecycleRefusesCalls holds a row inside the store (beside an
// Unprovable operation, when the harness can stage one) and calls
// Recycle aside with Wait left: it must wait for the row. The moment it
// first looks at its context the check makes every call a Recycle
// refuses, polls the operations, lets the transfers the store gave up
// on run to their end, cancels the held operation, then lets its row go.
// The refusals are judged only if Recycle was still waiting once the
// calls were made; what they left behind is looked at once every
// operation settled and a Drain answered true.
func checkRecycleRefusesCalls(b *bench) {
	b.recycler()
	switch {
	case b.sub.Hold == nil:
		b.skip(skipHook, "the check needs a row held inside the store while Recycle waits: the harness has no Hold hook")
	case !b.canStage():
		b.skip(skipHook, "the check needs an object in the store: the driver does not put and the harness has no Seed hook")
	}
	var u *watch
	if b.serves(GetDir) && b.sub.UnprovableGets != nil {
		_, u = b.unprovableRows("unprovable", 1, true, nil)
	} else {
		b.note("no Unprovable operation is polled while Recycle waits: the driver does not get, or the harness has no UnprovableGets hook")
	}
	dir := b.heldDir()
	held := b.seeded(dir, b.region(1), []int{0}, "held")
	calm := b.region(2)
	extra := b.lend(1, b.kind())
	g := b.hold(dir)
	hw := b.admit(dir, held.batch, nil, nil)
	if !b.await(g.Held) {
		b.r.Fatalf("%s: no row was held inside the store within %v", hw.label, b.h.Wait)
	}
	ctx, cancel := b.bound()
	defer cancel()
	looking := make(chan struct{})
	ws, result := b.recycleAside(&consulted{Context: ctx, onConsult: func() { close(looking) }})
	var early *recycleResult
	if !b.await(func(ctx context.Context) error {
		select {
		case <-looking:
			return nil
		case r := <-result:
			early = &r
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}) {
		b.hook("Gate.Release", g.Release)
		b.recycleReturned(ws, result)
		b.r.Fatalf("%s: Recycle did not look at its context within %v while a row was held inside the store: it waits within its context for the rows inside the store", hw.label, b.h.Wait)
	}
	if early != nil {
		b.hook("Gate.Release", g.Release)
		b.recycleEnd(ws, early.err)
		b.r.Fatalf("%s: Recycle returned %v while a row was held inside the store, its context with time left: it waits within its context for the rows inside the store", hw.label, early.err)
	}

	b.during = "while a Recycle waits for a row held inside the store"
	calls := b.callsDuring(calm, extra)
	st := hw.poll()
	var late *recycleResult
	select {
	case r := <-result:
		late = &r
	default:
		calls.report(b)
	}
	if st.Access != contract.Open || st.Settled() {
		b.r.Errorf("%s: polled while a Recycle waited for its row held inside the store, the operation reads rows %v, access %v: a row inside the store runs on, and Poll answers from the state before or after the Recycle", hw.label, st.Rows, st.Access)
	}
	if u != nil {
		// Unprovable before, Ended after: either, but an access that
		// reads Ended must have no transfer left to write its memory,
		// which the next driver call's look shows once the transfers
		// the store gave up on ran to their end.
		u.poll()
		b.finishStrays()
		u.poll()
	}
	if ok, p := b.call(hw.label+": Cancel", hw.operation().Cancel); ok && p != nil {
		b.r.Errorf("%s: Cancel panicked: %v", hw.label, p)
	}
	hw.poll()
	b.during = ""
	b.hook("Gate.Release", g.Release)

	var err error
	if late != nil {
		b.r.Errorf("%s: Recycle returned %v while a row was held inside the store, its context with time left: it waits within its context for the rows inside the store", hw.label, late.err)
		b.recycleEnd(ws, late.err)
		err = late.err
	} else {
		err = b.recycleReturned(ws, result)
	}
	if late == nil && err != nil && !errors.Is(err, contract.ErrRecycledClosed) {
		b.r.Errorf("%s: Recycle failed (%v) though its context had time left and the held row was let go: Recycle waits within its context for the rows inside the store", hw.label, err)
	}
	st = hw.settle()
	hw.expect(st, "Cancel came while the row ran in the store: it runs on and keeps the store's verdict, or ends Cancelled having touched nothing", contract.Ready, contract.Cancelled)
	if !b.drain(false) {
		b.r.Errorf("Drain returned false once every operation settled after the Recycle")
	}
	for _, w := range calls.refused {
		if slices.Contains(calls.admitted, w) {
			continue
		}
		if n := w.calls.Load(); n > 0 {
			b.r.Errorf("%s: refused while a Recycle ran, yet onChange was called %d time(s): a refusal records nothing", w.label, n)
		}
		if w.dir == PutDir && b.sub.Object != nil {
			if key := w.batch.Key(0); b.hasObject(key) {
				b.r.Errorf("%s: refused while a Recycle ran, yet the store holds an object under %q: a refusal reaches nothing", w.label, key)
			}
		}
	}
	if off, bad := calm.stray(calm.span(0)); bad && len(calls.admitted) == 0 {
		b.r.Errorf("region %s: the byte at offset %d was written, though every call over it while a Recycle ran was refused: a refusal reaches nothing", calm.label, off)
	}
}
