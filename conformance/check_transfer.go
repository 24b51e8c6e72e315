package conformance

import (
	"fmt"
	"slices"

	"github.com/kvshare/kvshare/contract"
)

// capRows returns n, or the driver's row cap if that is smaller.
func (b *bench) capRows(n int) int {
	if c := b.caps.MaxRowsPerOp; c > 0 && c < n {
		return c
	}
	return n
}

// moving is a batch of whole-slot rows over slots of one region, with
// the object each row moves.
type moving struct {
	a     *arena
	slots []int
	batch contract.RowBatch
	data  [][]byte
}

// rows builds a batch over the given slots of a, rows named tag-i. For a
// put each slot is filled with its row's object; for a get, when stage is
// set, each object is stored first (through a put when the driver has
// one). Slots not named keep the canary.
func (b *bench) rows(dir Direction, a *arena, slots []int, tag string, stage bool) moving {
	b.r.Helper()
	m := moving{a: a, slots: slots}
	m.batch = b.batch()
	for i, s := range slots {
		name := b.rowName(fmt.Sprintf("%s-%d", tag, i))
		data := payload(name, int(b.h.SlotBytes))
		switch {
		case dir == PutDir:
			b.fill(a, s, data)
		case stage:
			b.stage(name, data, true)
		}
		m.batch.Rows = append(m.batch.Rows, row(name, a.span(s)))
		m.data = append(m.data, data)
	}
	return m
}

// needObjects skips a get's check when the suite cannot put objects in
// the store for it to read.
func (b *bench) needObjects() {
	b.r.Helper()
	if b.dir == GetDir && !b.canStage() {
		b.skip(skipHook, "the check needs objects in the store: the driver does not put and the harness has no Seed hook")
	}
}

// seeded builds, as rows does, a batch over the given slots of a, rows
// named tag-i, but for a get stores each object through the Seed hook
// when the harness has one (a put of the driver otherwise): for checks
// whose point is not the round trip.
func (b *bench) seeded(dir Direction, a *arena, slots []int, tag string) moving {
	b.r.Helper()
	if dir == PutDir || b.sub.Seed == nil {
		return b.rows(dir, a, slots, tag, b.canStage())
	}
	m := b.rows(dir, a, slots, tag, false)
	for i, r := range m.batch.Rows {
		b.seed(b.keyOf(string(r.Name)), m.data[i])
	}
	return m
}

// spans returns every span of the batch.
func (m moving) spans() []contract.Span {
	var out []contract.Span
	for _, r := range m.batch.Rows {
		out = append(out, r.Spans...)
	}
	return out
}

// landed reports rows whose slot does not hold their object.
func (m moving) landed(b *bench, w *watch, st contract.OpState) {
	b.r.Helper()
	for i, s := range m.slots {
		if i < len(st.Rows) && st.Rows[i] == contract.Ready {
			if off, bad := firstDiff(m.a.slot(s), m.data[i]); bad {
				b.r.Errorf("%s: row %d (%s) ended ready but its slot differs from the object at byte %d", w.label, i, w.row(i), off)
			}
		}
	}
}

// checkResultCount moves batches of several sizes; the watch holds
// every snapshot, the first taken at once, to one status per row,
// appended to its dst. A poll after settling, into the other of the
// watch's two buffers, shows whether the settled snapshot changed.
func checkResultCount(b *bench) {
	for i, n := range []int{1, 3, 5} {
		n = b.capRows(n)
		m := b.rows(b.dir, b.region(n), seq(n), fmt.Sprintf("op%d", i), b.canStage())
		w := b.admit(b.dir, m.batch, nil, nil)
		w.poll()
		w.settle()
		w.poll()
	}
}

// seq returns 0, 1, …, n-1.
func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// spread returns n slots with a free slot around each: 1, 3, 5, …
func spread(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 2*i + 1
	}
	return out
}

func checkPutRoundTrip(b *bench) {
	b.needDir(PutDir)
	if !b.canReadBack() {
		b.skip(skipHook, "the check reads puts back: the driver does not get and the harness has no Object hook")
	}
	n := b.capRows(3)
	a := b.region(2*n + 1)
	m := b.rows(PutDir, a, spread(n), "obj", false)
	w := b.admit(PutDir, m.batch, nil, nil)
	st := w.settle()
	w.expect(st, "a put of a fresh key to a store with room is ready", contract.Ready)
	for i, s := range m.slots {
		if off, bad := firstDiff(a.slot(s), m.data[i]); bad {
			b.r.Errorf("%s: row %d's slot changed at byte %d: a put only reads its memory", w.label, i, off)
		}
	}
	b.untouched("a put writes no memory", m.spans()...)
	for i, r := range m.batch.Rows {
		if i >= len(st.Rows) || st.Rows[i] != contract.Ready {
			continue
		}
		got, ok := b.readBack(string(r.Name), len(m.data[i]), true)
		if !ok {
			continue
		}
		if off, bad := firstDiff(got, m.data[i]); bad {
			b.r.Errorf("%s: row %d (%s) ended ready, but the object read back differs from the slot at byte %d (%d bytes back, %d put)",
				w.label, i, w.row(i), off, len(got), len(m.data[i]))
		}
		if b.caps.Get && b.sub.Object != nil {
			key := m.batch.Key(i)
			if obj, ok := b.object(key); !ok || !slices.Equal(obj, m.data[i]) {
				b.r.Errorf("%s: row %d (%s) ended ready, but the store's object under its key %q (present %v, %d bytes) is not the slot's bytes: a driver stores each row under exactly the key the batch's key maker builds",
					w.label, i, w.row(i), key, ok, len(obj))
			}
		}
	}
}

func checkGetRoundTrip(b *bench) {
	b.needDir(GetDir)
	if !b.canStage() {
		b.skip(skipHook, "the check needs objects in the store: the driver does not put and the harness has no Seed hook")
	}
	n := b.capRows(3)
	a := b.region(2*n + 1)
	m := b.rows(GetDir, a, spread(n), "obj", true)
	w := b.admit(GetDir, m.batch, nil, nil)
	st := w.settle()
	w.expect(st, "every object is stored, whole", contract.Ready)
	m.landed(b, w, st)
	b.untouched("a get writes only inside its spans", m.spans()...)
}

func checkMultiSpan(b *bench) {
	if !b.caps.MultiSpan {
		b.skip(skipCapability, "the driver does not declare MultiSpan")
	}
	name := b.rowName("two-spans")
	data := payload(name, int(2*b.h.SlotBytes))
	a := b.region(5)
	spans := []contract.Span{a.span(1), a.span(3)}
	if b.dir == PutDir {
		if !b.canReadBack() {
			b.skip(skipHook, "the check reads puts back: the driver does not get and the harness has no Object hook")
		}
		b.fill(a, 1, data[:b.h.SlotBytes])
		b.fill(a, 3, data[b.h.SlotBytes:])
		w := b.admit(PutDir, b.batch(row(name, spans...)), nil, nil)
		st := w.settle()
		b.untouched("a put writes no memory", spans...)
		if w.expect(st, "a put of a fresh key to a store with room is ready", contract.Ready) {
			if got, ok := b.readBack(name, len(data), true); ok {
				if off, bad := firstDiff(got, data); bad {
					b.r.Errorf("%s: the object read back differs from the two spans, in order, at byte %d", w.label, off)
				}
			}
		}
		return
	}
	b.stage(name, data, true)
	w := b.admit(GetDir, b.batch(row(name, spans...)), nil, nil)
	st := w.settle()
	if w.expect(st, "the object is stored, whole", contract.Ready) {
		got := append(append([]byte(nil), a.slot(1)...), a.slot(3)...)
		if off, bad := firstDiff(got, data); bad {
			b.r.Errorf("%s: the two spans, in order, differ from the object at byte %d", w.label, off)
		}
	}
	b.untouched("a get writes only inside its spans", spans...)
}

func checkAbsentKey(b *bench) {
	b.needDir(GetDir)
	a := b.region(3)
	w := b.admit(GetDir, b.batch(row(b.rowName("never-stored"), a.span(1))), nil, nil)
	st := w.settle()
	if st.Access == contract.Unprovable {
		if b.caps.AbsentIsMiss {
			b.r.Errorf("%s: a get of an absent key left access unprovable, though the driver declares AbsentIsMiss", w.label)
		}
		b.skip(skipDriver, "%s: access unprovable (allowed without AbsentIsMiss); the region's memory is kept", w.label)
	}
	if b.caps.AbsentIsMiss {
		w.expect(st, "the key was never stored and the driver declares AbsentIsMiss", contract.Miss)
	} else {
		w.expect(st, "the key was never stored", contract.Miss, contract.Fault)
	}
	if len(st.Rows) > 0 && st.Rows[0] == contract.Miss {
		b.untouched("a get that ends Miss leaves its slot untouched")
	} else {
		b.untouched("a get writes only inside its spans", a.span(1))
	}
}

func checkWriterHoldsKey(b *bench) {
	if b.sub.Writing == nil {
		b.skip(skipHook, "the harness cannot stage another writer (no Writing hook)")
	}
	name := b.rowName("being-written")
	key := b.keyOf(name)
	theirs := payload(name+"/theirs", int(b.h.SlotBytes))
	var finish func([]byte)
	b.hook("Writing", func() { finish = b.sub.Writing(key) })
	if finish == nil {
		b.r.Fatalf("the Writing hook returned no finish function")
	}
	b.undo = append(b.undo, func() { finish(nil) })
	a := b.region(3)
	if b.dir == GetDir {
		w := b.admit(GetDir, b.batch(row(name, a.span(1))), nil, nil)
		st := w.settle()
		w.expect(st, "another writer holds the key, not yet readable", contract.NotReady)
		b.untouched("a get that ends NotReady leaves its slot untouched")
		b.hook("finish", func() { finish(theirs) })
		w = b.admit(GetDir, b.batch(row(name, a.span(1))), nil, nil)
		st = w.settle()
		if w.expect(st, "the other writer finished the object", contract.Ready) {
			if off, bad := firstDiff(a.slot(1), theirs); bad {
				b.r.Errorf("%s: ended ready but the slot differs from the other writer's object at byte %d", w.label, off)
			}
		}
		return
	}
	ours := payload(name+"/ours", int(b.h.SlotBytes))
	b.fill(a, 1, ours)
	w := b.admit(PutDir, b.batch(row(name, a.span(1))), nil, nil)
	st := w.settle()
	w.expect(st, "another writer holds the key, not yet readable", contract.NotReady)
	b.untouched("a put writes no memory", a.span(1))
	b.hook("finish", func() { finish(theirs) })
	if b.sub.Object == nil && !b.caps.Get {
		return
	}
	if got, ok := b.readBack(name, len(theirs), false); ok {
		if off, bad := firstDiff(got, theirs); bad {
			b.r.Errorf("%s: ended NotReady, yet the object under the key is not the other writer's (differs at byte %d): a NotReady put writes nothing", w.label, off)
		}
	}
}

func checkShortObject(b *bench) {
	b.needDir(GetDir)
	name := b.rowName("short")
	b.stage(name, payload(name, int(b.h.SlotBytes/2)), false)
	a := b.region(3)
	w := b.admit(GetDir, b.batch(row(name, a.span(1))), nil, nil)
	st := w.settle()
	w.expect(st, fmt.Sprintf("the object (%d bytes) is shorter than the row (%d bytes)", b.h.SlotBytes/2, b.h.SlotBytes), contract.Fault)
	b.untouched("a get writes only inside its spans, even for an object of the wrong size", a.span(1))
}

func checkLongObject(b *bench) {
	b.needDir(GetDir)
	name := b.rowName("long")
	n := b.h.SlotBytes + b.h.SlotBytes/2
	b.stage(name, payload(name, int(n)), false)
	a := b.region(3)
	w := b.admit(GetDir, b.batch(row(name, a.span(1))), nil, nil)
	st := w.settle()
	w.expect(st, fmt.Sprintf("the object (%d bytes) is longer than the row (%d bytes), so it is refused", n, b.h.SlotBytes), contract.Fault)
	b.untouched("an object longer than its row is refused with nothing written")
}

func checkFullStore(b *bench) {
	b.needDir(PutDir)
	if b.sub.Full == nil {
		b.skip(skipHook, "the harness cannot fill the store (no Full hook)")
	}
	b.hook("Full", b.sub.Full)
	a := b.region(1)
	m := b.rows(PutDir, a, []int{0}, "refused", false)
	w := b.admit(PutDir, m.batch, nil, nil)
	st := w.settle()
	w.expect(st, "the store is full and refuses the object on its own terms", contract.Declined)
	b.untouched("a put writes no memory", m.spans()...)
	if b.sub.Object != nil {
		if b.hasObject(m.batch.Key(0)) {
			b.r.Errorf("%s: ended %v, yet the store holds an object under the key", w.label, st.Rows)
		}
	}
}

func checkFailedRead(b *bench) {
	b.needDir(GetDir)
	if b.sub.FailReads == nil {
		b.skip(skipHook, "the harness cannot fail a read (no FailReads hook)")
	}
	name := b.rowName("unreadable")
	b.stage(name, payload(name, int(b.h.SlotBytes)), false)
	a := b.region(3)
	read := b.batch(row(name, a.span(1)))
	b.hook("FailReads", func() { b.sub.FailReads(read.Key(0)) })
	w := b.admit(GetDir, read, nil, nil)
	st := w.settle()
	w.expect(st, "the store failed the read", contract.Fault)
	b.untouched("a get writes only inside its spans, even when the read fails", a.span(1))
}

func checkCrash(b *bench) {
	if b.sub.Crash == nil {
		b.skip(skipHook, "the harness cannot crash a store call (no Crash hook)")
	}
	n := b.capRows(3)
	a := b.region(n)
	m := b.rows(b.dir, a, seq(n), "crashed", b.canStage())
	b.hook("Crash", func() { b.sub.Crash(b.dir) })
	w := b.admit(b.dir, m.batch, nil, nil)
	st := w.settle()
	w.expect(st, "the store call crashed", contract.Fault, contract.Cancelled)
	if !slices.Contains(st.Rows, contract.Fault) {
		b.r.Errorf("%s: no row ended Fault (%v), yet every store call crashed", w.label, st.Rows)
	}
	if st.Access == contract.Unprovable {
		b.r.Logf("%s: access unprovable after the crash; the region's memory is kept", w.label)
	}
	if b.dir == PutDir {
		b.untouched("a put writes no memory", m.spans()...)
	} else {
		b.untouched("a get writes only inside its spans", m.spans()...)
	}
}
