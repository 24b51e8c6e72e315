package conformance

import (
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// row builds a batch row named name.
func row(name string, spans ...contract.Span) contract.Row {
	return contract.Row{Name: []byte(name), Spans: spans}
}

// batch builds a batch of rows with the suite's key maker.
func (b *bench) batch(rows ...contract.Row) contract.RowBatch {
	return contract.RowBatch{Keys: b.keys, Rows: rows}
}

// canStage reports whether the suite can put an object in the store: by
// the harness's Seed hook, or by a put of the driver.
func (b *bench) canStage() bool { return b.sub.Seed != nil || b.caps.Put }

// stage stores a complete object under the key of the row named name.
// With viaPut it uses the driver's put when it has one (a real round
// trip); otherwise the Seed hook when the harness has one (the check
// then depends on the get path alone). The object may be up to two
// slots long. A check that cannot stage skips.
func (b *bench) stage(name string, data []byte, viaPut bool) {
	b.r.Helper()
	switch {
	case b.caps.Put && (viaPut || b.sub.Seed == nil):
		b.stageByPut(name, data)
	case b.sub.Seed != nil:
		b.seed(b.keyOf(name), data)
	default:
		b.skip(skipHook, "the check needs an object in the store: the driver does not put and the harness has no Seed hook")
	}
}

// seed stores data under key through the Seed hook.
func (b *bench) seed(key string, data []byte) {
	b.r.Helper()
	b.hook("Seed", func() { b.sub.Seed(key, data) })
}

// scratchSlots is the size of a scratch region: four objects of up to
// two slots each, every one in memory of its own, so that the memory of
// a staging put stays watched after its access ended (see seal) rather
// than reused by the next.
const scratchSlots = 8

// stageByPut puts data as the row named name from the scratch region.
func (b *bench) stageByPut(name string, data []byte) {
	b.r.Helper()
	if int64(len(data)) > 2*b.h.SlotBytes {
		b.r.Fatalf("conformance: staged object of %d bytes is over two slots", len(data))
	}
	if b.scratch == nil || b.scratchN+2 > b.scratch.region.SlotCount {
		b.scratch, b.scratchN = b.region(scratchSlots), 0
	}
	s := b.scratch.spanAt(int64(b.scratchN)*b.h.SlotBytes, int64(len(data)))
	b.scratchN += 2
	b.write(b.scratch, s, data)
	w := b.admit(PutDir, b.batch(row(name, s)), nil, nil)
	st := w.settle()
	b.provable(w, st, "staging an object")
	if len(st.Rows) > 0 && st.Rows[0] != contract.Ready {
		b.r.Fatalf("staging %q (%d bytes) through a put: the put ended %v, want ready", name, len(data), st.Rows[0])
	}
	b.scratch.repaint(s)
}

// canReadBack reports whether the suite can read an object back: by a
// get of the driver or the harness's Object hook.
func (b *bench) canReadBack() bool { return b.sub.Object != nil || b.caps.Get }

// readBack returns the object stored under the key of the row named
// name, expected to be n bytes long. With viaGet it uses the driver's
// get when it has one; otherwise the Object hook when the harness has
// one. ok is false, and the finding reported, when no whole object came
// back.
func (b *bench) readBack(name string, n int, viaGet bool) (data []byte, ok bool) {
	b.r.Helper()
	switch {
	case b.caps.Get && (viaGet || b.sub.Object == nil):
		slots := (int64(n) + b.h.SlotBytes - 1) / b.h.SlotBytes
		a := b.region(int(slots))
		s := a.spanAt(0, int64(n))
		w := b.admit(GetDir, b.batch(row(name, s)), nil, nil)
		st := w.settle()
		b.provable(w, st, "reading an object back")
		if len(st.Rows) == 0 || st.Rows[0] != contract.Ready {
			b.r.Errorf("reading %q back through a get of %d bytes: ended %v, want ready", name, n, st.Rows)
			return nil, false
		}
		data := append([]byte(nil), a.bytesOf(s)...)
		a.repaint(s)
		return data, true
	case b.sub.Object != nil:
		key := b.keyOf(name)
		data, ok := b.object(key)
		if !ok {
			b.r.Errorf("reading %q back through the Object hook: no complete object under its key %q", name, key)
		}
		return data, ok
	}
	b.skip(skipHook, "the check needs to read the store: the driver does not get and the harness has no Object hook")
	return nil, false
}

// provable ends the check as a skip when a row the suite moved for its
// own ends (staging, reading back, proving a region live) has access
// unprovable: the check cannot go on without that memory, which is kept
// for good.
func (b *bench) provable(w *watch, st contract.OpState, what string) {
	b.r.Helper()
	if st.Access == contract.Unprovable {
		b.skip(skipDriver, "%s, for %s: access unprovable, so the check cannot go on; the memory of the row is kept", w.label, what)
	}
}

// moveRow proves a region live by moving one row through slot i of it:
// a put of the slot if the driver puts, else a get into it of an object
// the Seed hook staged. A row whose access ends unprovable ends the check
// as a skip; the region's memory is then kept. It reports and returns
// false when the row does not end Ready (or, for a get, the slot does not
// hold the object).
func (b *bench) moveRow(a *arena, i int) bool {
	b.r.Helper()
	b.probes++
	name := b.rowName(fmt.Sprintf("probe-%d", b.probes))
	data := payload(name, int(b.h.SlotBytes))
	probe := b.batch(row(name, a.span(i)))
	var w *watch
	if b.caps.Put {
		b.fill(a, i, data)
		w = b.admit(PutDir, probe, nil, nil)
	} else {
		if b.sub.Seed == nil {
			b.skip(skipHook, "proving region %s live needs a row through it: the driver does not put and the harness has no Seed hook", a.label)
		}
		b.seed(probe.Key(0), data)
		w = b.admit(GetDir, probe, nil, nil)
	}
	st := w.settle()
	b.provable(w, st, "proving region "+a.label+" live")
	if len(st.Rows) == 0 || st.Rows[0] != contract.Ready {
		b.r.Errorf("%s: the probe row through region %s ended %v, want ready: the region is not live", w.label, a.label, st.Rows)
		return false
	}
	if !b.caps.Put {
		if off, bad := firstDiff(a.slot(i), data); bad {
			b.r.Errorf("%s: the probe row through region %s ended ready but slot %d differs from the object at byte %d", w.label, a.label, i, off)
			return false
		}
	}
	a.repaint(a.span(i))
	return true
}
