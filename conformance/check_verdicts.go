package conformance

import (
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// A verdict mix is a batch whose rows must end differently: each letter
// is one row. For a get, 's' is an object stored first and 'a' a key
// never stored; for a put, 'f' is a fresh key and 'w' a key another
// writer is still writing. Each letter string and its reverse run, so a
// driver that answers rows in any order but batch order (reversed,
// sorted by status, in the order they ended) gets one of them wrong.
var verdictMixes = map[Direction][]string{
	GetDir: {"ssa", "ass", "sa", "as"},
	PutDir: {"fwf", "wff", "fw", "wf"},
}

// checkVerdictOrder moves batches of mixed verdicts: every row must end
// with its own verdict, in batch order. The batches have three rows, or
// two under a MaxRowsPerOp of 2; a cap of 1 leaves nothing to mix.
func checkVerdictOrder(b *bench) {
	n := b.capRows(3)
	if n < 2 {
		b.skip(skipCapability, "MaxRowsPerOp is %d: no batch can mix verdicts", b.caps.MaxRowsPerOp)
	}
	switch {
	case b.dir == GetDir && !b.canStage():
		b.skip(skipHook, "the check needs objects in the store: the driver does not put and the harness has no Seed hook")
	case b.dir == PutDir && b.sub.Writing == nil:
		b.skip(skipHook, "the check needs a key another writer holds (no Writing hook)")
	}
	for i, mix := range verdictMixes[b.dir] {
		if len(mix) == n {
			b.mixVerdicts(fmt.Sprintf("mix%d", i), mix)
		}
	}
}

// mixVerdicts moves one verdict mix (see verdictMixes) and holds each row
// to its own verdict.
func (b *bench) mixVerdicts(tag, mix string) {
	b.r.Helper()
	a := b.region(len(mix))
	m := moving{a: a, slots: seq(len(mix)), batch: b.batch()}
	want := make([][]contract.RowStatus, len(mix))
	for i, c := range mix {
		name := b.rowName(fmt.Sprintf("%s-%c%d", tag, c, i))
		data := payload(name, int(b.h.SlotBytes))
		switch c {
		case 's':
			b.stage(name, data, true)
			want[i] = []contract.RowStatus{contract.Ready}
		case 'a':
			want[i] = []contract.RowStatus{contract.Miss}
			if !b.caps.AbsentIsMiss {
				want[i] = append(want[i], contract.Fault)
			}
		case 'f':
			b.fill(a, i, data)
			want[i] = []contract.RowStatus{contract.Ready}
		case 'w':
			b.fill(a, i, data)
			b.otherWriter(b.keyOf(name))
			want[i] = []contract.RowStatus{contract.NotReady}
		}
		m.batch.Rows = append(m.batch.Rows, row(name, a.span(i)))
		m.data = append(m.data, data)
	}
	w := b.admit(b.dir, m.batch, nil, nil)
	st := w.settle()
	if st.Access == contract.Unprovable && !b.caps.AbsentIsMiss {
		b.skip(skipDriver, "%s: access unprovable (allowed for an absent key without AbsentIsMiss); the region's memory is kept", w.label)
	}
	for i, s := range st.Rows {
		if i < len(want) && !containsStatus(want[i], s) {
			b.r.Errorf("%s: row %d (%s) ended %v, want %s: rows of mixed verdicts end each with its own verdict, in batch order (the batch's rows end %v, want %s)",
				w.label, i, w.row(i), s, statusList(want[i]), st.Rows, mixWant(want))
		}
	}
	if b.dir == GetDir {
		m.landed(b, w, st)
	}
}

// mixWant describes the verdicts a mix wants, for findings: "[ready
// ready miss]".
func mixWant(want [][]contract.RowStatus) string {
	out := "["
	for i, w := range want {
		if i > 0 {
			out += " "
		}
		out += statusList(w)
	}
	return out + "]"
}

// otherWriter stages, with the Writing hook, another writer still
// writing key; teardown abandons it.
func (b *bench) otherWriter(key string) {
	b.r.Helper()
	var finish func([]byte)
	b.hook("Writing", func() { finish = b.sub.Writing(key) })
	if finish == nil {
		b.r.Fatalf("the Writing hook returned no finish function")
	}
	b.undo = append(b.undo, func() { finish(nil) })
}

// checkSecondPut holds a put inside the store and puts the same key
// again: while the first is still writing it, the second must end
// NotReady. Whether the second can end while the first is held depends
// on the driver having a free worker; a thorough run waits for it
// (within Wait), a normal one looks once, at once. Either way, a second
// put seen to end while the first was held must be NotReady, and both
// puts carry the same bytes, so the object is those bytes whichever
// stored it.
func checkSecondPut(b *bench) {
	b.needDir(PutDir)
	name := b.rowName("written-twice")
	data := payload(name, int(b.h.SlotBytes))
	a := b.region(2)
	b.fill(a, 0, data)
	b.fill(a, 1, data)
	first := b.batch(row(name, a.span(0)))
	g := b.hold(PutDir)
	w1 := b.admit(PutDir, first, nil, nil)
	if !b.await(g.Held) {
		b.r.Fatalf("%s: no row was held inside the store within %v", w1.label, b.h.Wait)
	}
	w2 := b.admit(PutDir, b.batch(row(name, a.span(1))), nil, nil)
	st2, during := w2.poll(), false
	if b.h.Thorough {
		st2, during = w2.await(done)
	}
	during = during || done(st2)
	if during {
		w2.expect(st2, "another put of this driver was still writing the key (held inside the store)", contract.NotReady)
	} else {
		b.note("%s: the second put had not ended while the first was held (a normal run looks once; a thorough run waits), so its verdict was not held to NotReady", w2.label)
	}
	b.hook("Gate.Release", g.Release)
	st1 := w1.settle()
	w1.expect(st1, "the held put was let go", contract.Ready)
	st2 = w2.settle()
	w2.expect(st2, "the second put ran while the first was writing (not-ready) or after it (ready)", contract.Ready, contract.NotReady)
	if !b.canReadBack() {
		return
	}
	if got, ok := b.readBack(name, len(data), false); ok {
		if off, bad := firstDiff(got, data); bad {
			b.r.Errorf("%s: the object under the key differs from what both puts carried at byte %d", w1.label, off)
		}
	}
}
