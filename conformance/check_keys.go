package conformance

import (
	"github.com/kvshare/kvshare/contract"
)

// exactKeyPicks are the rows of exact-key: a plain name, and names with
// bytes the suite's key maker escapes (a space, its escape byte '%', its
// fill byte '~', a NUL, bytes that are no UTF-8), so that a key is far
// from the name, and from hex of it.
var exactKeyPicks = []string{"plain", "with space", "per%cent", "tilde~", "nul\x00byte", "\xff\xfe"}

// checkExactKey moves rows whose keys only the batch's key maker knows.
// A put must leave each object under exactly batch.Key(i), where the
// Object hook looks; a get must find each object the Seed hook put
// there. Staging or reading back through the driver itself would not
// do: a driver with a key grammar of its own passes its own round trip.
func checkExactKey(b *bench) {
	if b.dir == PutDir && b.sub.Object == nil {
		b.skip(skipHook, "the check looks for each object under its key: the harness has no Object hook")
	}
	if b.dir == GetDir && b.sub.Seed == nil {
		b.skip(skipHook, "the check stores each object under its key: the harness has no Seed hook")
	}
	per := b.capRows(len(exactKeyPicks))
	for start := 0; start < len(exactKeyPicks); start += per {
		picks := exactKeyPicks[start:min(start+per, len(exactKeyPicks))]
		a := b.region(len(picks))
		m := moving{a: a, slots: seq(len(picks)), batch: b.batch()}
		for i, pick := range picks {
			name := b.rowName(pick)
			m.batch.Rows = append(m.batch.Rows, row(name, a.span(i)))
			m.data = append(m.data, payload(name, int(b.h.SlotBytes)))
		}
		if b.dir == PutDir {
			b.exactKeyPut(m)
		} else {
			b.exactKeyGet(m)
		}
	}
}

// exactKeyPut puts m and looks for each object under its key.
func (b *bench) exactKeyPut(m moving) {
	b.r.Helper()
	for i, s := range m.slots {
		b.fill(m.a, s, m.data[i])
	}
	w := b.admit(PutDir, m.batch, nil, nil)
	st := w.settle()
	w.expect(st, "a put of a fresh key to a store with room is ready", contract.Ready)
	b.untouched("a put writes no memory", m.spans()...)
	for i := range m.batch.Rows {
		if i >= len(st.Rows) || st.Rows[i] != contract.Ready {
			continue
		}
		key := m.batch.Key(i)
		obj, ok := b.object(key)
		switch {
		case !ok:
			b.r.Errorf("%s: row %d (%s) ended ready, but the store holds no object under its key %q: a driver stores each row under exactly the key the batch's key maker builds (RowBatch.AppendKey), never a key of its own",
				w.label, i, w.row(i), key)
		default:
			if off, bad := firstDiff(obj, m.data[i]); bad {
				b.r.Errorf("%s: row %d (%s) ended ready, but the object under its key %q differs from the slot at byte %d (%d bytes stored, %d put)",
					w.label, i, w.row(i), key, off, len(obj), len(m.data[i]))
			}
		}
	}
	for _, s := range m.spans() {
		m.a.repaint(s)
	}
}

// exactKeyGet seeds each object of m under its key and gets them.
func (b *bench) exactKeyGet(m moving) {
	b.r.Helper()
	for i := range m.batch.Rows {
		b.seed(m.batch.Key(i), m.data[i])
	}
	w := b.admit(GetDir, m.batch, nil, nil)
	st := w.settle()
	w.expect(st, "each object is stored, whole, under exactly the key the batch's key maker builds (RowBatch.AppendKey): a driver reads under that key, never a key of its own", contract.Ready)
	m.landed(b, w, st)
	b.untouched("a get writes only inside its spans", m.spans()...)
	for _, s := range m.spans() {
		m.a.repaint(s)
	}
}
