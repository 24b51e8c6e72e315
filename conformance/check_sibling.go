package conformance

import (
	"github.com/kvshare/kvshare/contract"
)

// sibling is how held-sibling fails its row A: the hook that makes the
// store fail it, and the verdict row B, held meanwhile, then has of its
// own.
type sibling struct {
	how   string // "a failed read", "a crash"
	fail  func(key string)
	heldB []contract.RowStatus // what row B ends once let go
}

// siblingFailure picks how the check fails row A: a get's read the store
// fails (FailReads), else a crash (Crash), which strikes row B's store
// call too once it is let go. It skips when the harness can stage
// neither.
func (b *bench) siblingFailure() sibling {
	b.r.Helper()
	if b.dir == GetDir && b.sub.FailReads != nil {
		return sibling{how: "a failed read", heldB: []contract.RowStatus{contract.Ready},
			fail: func(key string) { b.hook("FailReads", func() { b.sub.FailReads(key) }) }}
	}
	if b.sub.Crash != nil {
		return sibling{how: "a crash", heldB: []contract.RowStatus{contract.Fault},
			fail: func(string) { b.hook("Crash", func() { b.sub.Crash(b.dir) }) }}
	}
	b.skip(skipHook, "the check fails a row while another is held: the harness has no FailReads (a get) or Crash hook")
	return sibling{}
}

// checkHeldSibling holds row B ("held", row 0) of a two-row operation by
// its key and fails row A ("failing", row 1): the operation's access
// must stay Open until B is let go, and B then ends with its own verdict,
// its memory watched from the access end on like every span's. Where the
// driver cannot run A while B is held (one store call carries both, or
// its only worker is blocked), A cannot end first: the check then holds
// only the access to Open while B is held.
func checkHeldSibling(b *bench) {
	if b.sub.HoldKeys == nil {
		b.skip(skipHook, "the harness cannot hold the rows of one key (no HoldKeys hook)")
	}
	if b.capRows(2) < 2 {
		b.skip(skipCapability, "MaxRowsPerOp is %d: no operation has two rows", b.caps.MaxRowsPerOp)
	}
	f := b.siblingFailure()
	b.needObjects()
	a := b.region(2)
	held := b.seeded(b.dir, a, []int{0}, "held")
	failing := b.seeded(b.dir, a, []int{1}, "failing")
	m := moving{a: a, slots: []int{0, 1}, batch: b.batch(held.batch.Rows[0], failing.batch.Rows[0]), data: append(held.data, failing.data...)}
	keyB, keyA := m.batch.Key(0), m.batch.Key(1)
	f.fail(keyA)
	var g KeyGate
	b.hook("HoldKeys", func() { g = b.sub.HoldKeys(b.dir, keyB) })
	if g == nil {
		b.r.Fatalf("the HoldKeys hook returned no KeyGate")
	}
	b.undo = append(b.undo, g.Release)
	w := b.admit(b.dir, m.batch, nil, nil)
	if !b.await(g.Held) {
		b.r.Fatalf("%s: row 0 (%s) was not held inside the store within %v", w.label, w.row(0), b.h.Wait)
	}
	var together bool
	b.hook("KeyGate.Holding", func() { together = g.Holding(keyA) })
	if together {
		b.note("%s: row 1 failing while row 0 is held: the gate holding row 0 holds row 1 too (one store call carries both, or no worker is free), so only the access was held to Open while row 0 was held", w.label)
	} else {
		w.wait("row 1 ("+f.how+") ended while row 0 was held", func(st contract.OpState) bool {
			return len(st.Rows) > 1 && st.Rows[1].Final()
		})
	}
	if st := w.poll(); st.Access != contract.Open {
		b.r.Errorf("%s: access read %v while row 0 (%s) was still held inside the store (rows %v, row 1 failed by %s): one row's failure is not the end of its siblings' access; access leaves Open only once no row of the operation can touch its memory",
			w.label, st.Access, w.row(0), st.Rows, f.how)
	}
	b.hook("KeyGate.Release", g.Release)
	st := w.settle()
	if len(st.Rows) < 2 {
		return
	}
	if st.Rows[1] != contract.Fault {
		b.r.Errorf("%s: row 1 (%s) ended %v, want fault: the store failed it (%s)", w.label, w.row(1), st.Rows[1], f.how)
	}
	if !containsStatus(f.heldB, st.Rows[0]) {
		b.r.Errorf("%s: row 0 (%s) ended %v, want %s: the row held while its sibling failed ends with its own verdict (%s strikes only what it strikes)",
			w.label, w.row(0), st.Rows[0], statusList(f.heldB), f.how)
	}
	if st.Access == contract.Unprovable {
		b.r.Logf("%s: access unprovable after %s; the region's memory is kept", w.label, f.how)
	}
	if b.dir == GetDir {
		m.landed(b, w, contract.OpState{Rows: []contract.RowStatus{st.Rows[0]}})
		b.untouched("a get writes only inside its spans", m.spans()...)
	} else {
		b.untouched("a put writes no memory", m.spans()...)
	}
	b.drain(false) // waits for anything of the operation still running, then looks at the sealed memory
}
