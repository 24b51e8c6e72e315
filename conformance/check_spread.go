package conformance

import (
	"context"
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// spreadCase is one way unregister-later-row stages the rows of its
// operation: tag names them, how says how they wait in findings, and
// stage sets them up before the operation is submitted.
type spreadCase struct {
	tag, how string
	slot     int // the slot of each region the case's rows use
	stage    func() staged
}

// staged is how a case staged its rows: letGo lets them go; held, when
// not nil, waits until one is held in the store.
type staged struct {
	letGo func()
	held  func(context.Context) error
}

// checkUnregisterLaterRow holds the driver to rule 4 for an operation
// whose rows lie in several regions, row i in region i: every region any
// row covers is busy, not only the first row's (nor the last's), while
// the rows wait unstarted (the Pause hook) and while they run in the
// store (the Hold hook). Both cases use the same regions, each its own
// slot of them; a case whose hook the harness lacks is left out and
// noted (the check skips when both are), and the second is not run once
// the first saw a busy region unregistered. Then one operation moves a
// row through every region, proving them live, and each unregisters.
func checkUnregisterLaterRow(b *bench) {
	n := b.capRows(3)
	if n < 2 {
		b.skip(skipCapability, "MaxRowsPerOp is %d: no operation has a later row", b.caps.MaxRowsPerOp)
	}
	if b.sub.Pause == nil && b.sub.Hold == nil {
		b.skip(skipHook, "the check needs rows that wait unstarted or run in the store while it unregisters: the harness has no Pause or Hold hook")
	}
	b.needObjects()
	as := make([]*arena, n)
	for i := range as {
		as[i] = b.region(3)
	}
	cases := []spreadCase{
		{"queued", "the rows waited unstarted", 0, func() staged {
			resume := b.pause()
			return staged{letGo: func() { b.hook("resume", resume) }}
		}},
		{"running", "rows of it held running in the store", 1, func() staged {
			g := b.hold(b.dir)
			return staged{letGo: func() { b.hook("Gate.Release", g.Release) }, held: g.Held}
		}},
	}
	for _, c := range cases {
		switch {
		case c.tag == "queued" && b.sub.Pause == nil:
			b.note("the case of rows no worker took: the harness has no Pause hook")
		case c.tag == "running" && b.sub.Hold == nil:
			b.note("the case of rows running in the store: the harness has no Hold hook")
		case !b.unregisterSpread(as, c):
			return // a region was let go: its memory is the driver's word now
		}
	}
	if b.moveRows(as, 2) {
		for _, a := range as {
			if err := b.unregister(b.lendingOf(a)); err != nil {
				b.r.Errorf("Unregister of region %s once idle: %v", a.label, err)
			}
		}
	}
}

// unregisterSpread admits an operation of a row in slot c.slot of each
// region of as, staged by c.stage, and asks Unregister of every one of
// the regions: each must be refused. It reports whether all were, once
// the operation settled.
func (b *bench) unregisterSpread(as []*arena, c spreadCase) bool {
	b.r.Helper()
	batch, data := b.batch(), [][]byte(nil)
	for _, a := range as {
		m := b.seeded(b.dir, a, []int{c.slot}, c.tag+"-"+a.label)
		batch.Rows = append(batch.Rows, m.batch.Rows...)
		data = append(data, m.data...)
	}
	s := c.stage()
	w := b.admit(b.dir, batch, nil, nil)
	if s.held != nil && !b.await(s.held) {
		b.r.Fatalf("%s: no row was held inside the store within %v", w.label, b.h.Wait)
	}
	all := true
	for i, a := range as {
		err := b.unregister(b.lendingOf(a))
		switch {
		case err == nil:
			b.r.Errorf("%s: Unregister of region %s succeeded while the operation's access was open and row %d (%s), the only row in it, not final (%s): an operation keeps busy every region any of its rows covers, not only its first row's",
				w.label, a.label, i, w.row(i), c.how)
			all = false
		case !isRejected(err):
			b.r.Errorf("%s: Unregister of region %s, busy with row %d (%s) of an open operation, failed with %v, which does not wrap ErrDriverRejected", w.label, a.label, i, w.row(i), err)
		}
	}
	s.letGo()
	st := w.settle()
	w.expect(st, "the rows ran once let go", contract.Ready)
	if b.dir == GetDir {
		for i, a := range as {
			if i < len(st.Rows) && st.Rows[i] == contract.Ready {
				if off, bad := firstDiff(a.slot(c.slot), data[i]); bad {
					b.r.Errorf("%s: row %d (%s) ended ready but its slot differs from the object at byte %d", w.label, i, w.row(i), off)
				}
			}
		}
	}
	return all
}

// moveRows proves regions live as moveRow does, with one operation: a
// row through the given slot of each (a put if the driver puts, else a
// get of an object the Seed hook staged). It reports and returns false
// when a row does not end Ready, or (for a get) its slot does not hold
// its object.
func (b *bench) moveRows(as []*arena, slot int) bool {
	b.r.Helper()
	if !b.caps.Put && b.sub.Seed == nil {
		b.skip(skipHook, "proving regions live needs rows through them: the driver does not put and the harness has no Seed hook")
	}
	dir := GetDir
	if b.caps.Put {
		dir = PutDir
	}
	probe := b.batch()
	var data [][]byte
	for _, a := range as {
		b.probes++
		name := b.rowName(fmt.Sprintf("probe-%d", b.probes))
		data = append(data, payload(name, int(b.h.SlotBytes)))
		probe.Rows = append(probe.Rows, row(name, a.span(slot)))
		if dir == PutDir {
			b.fill(a, slot, data[len(data)-1])
		} else {
			b.seed(b.keyOf(name), data[len(data)-1])
		}
	}
	w := b.admit(dir, probe, nil, nil)
	st := w.settle()
	b.provable(w, st, "proving regions live")
	ok := true
	for i, a := range as {
		switch {
		case i >= len(st.Rows) || st.Rows[i] != contract.Ready:
			b.r.Errorf("%s: the probe row through region %s ended %v, want ready: the region is not live", w.label, a.label, st.Rows)
			ok = false
		case dir == GetDir:
			if off, bad := firstDiff(a.slot(slot), data[i]); bad {
				b.r.Errorf("%s: the probe row through region %s ended ready but slot %d differs from the object at byte %d", w.label, a.label, slot, off)
				ok = false
			}
		}
		a.repaint(a.span(slot))
	}
	return ok
}
