package memdrv

import (
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv/internal/rawmem"
)

// put stores the row's bytes under key, never overwriting: a key
// with a complete object is Ready (the first object stays), a key being
// written is NotReady, an object beyond the store's capacity Declined.
// The bytes are copied out of the row's spans (into a bounded store's
// chunks, or a fresh heap slice) before the object becomes visible, so
// it is whole or absent.
func (d *Driver) put(row contract.Row, key string) contract.RowStatus {
	size := row.Bytes()
	w, verdict := d.store.reserve(key, size)
	if w == nil {
		return verdict
	}
	committed := false
	defer func() {
		if !committed {
			d.store.abandon(w)
		}
	}()
	if !w.obj.inChunks() {
		w.obj.heap = make([]byte, size)
	}
	d.store.midway(PutDir, key)
	w.obj.fill(row.Spans)
	committed = true
	if !d.store.commit(w) {
		return contract.Fault // deleted or replaced while being written
	}
	return contract.Ready
}

// get reads the object under key into the row's spans. Only an object of
// exactly the row's size is Ready. A shorter one lands in the head of
// the spans and is a Fault; a longer one is a Fault with nothing
// written. An absent key is Miss, or Fault (nothing written) for a
// driver that does not declare AbsentIsMiss. No byte outside the spans
// is ever written.
func (d *Driver) get(row contract.Row, key string, sc sceneRow) rowEnd {
	if sc.unprovable {
		// The store gave up on the transfer but it runs on: it lands
		// the object, if there is one, when FinishStrays says, unless a
		// Recycle tore it down first.
		if held, obj, verdict := d.store.lookup(key); verdict == contract.Ready {
			// Its own copy of the spans: the batch's are the caller's
			// only until the access ends.
			s := stray{spans: append([]contract.Span(nil), row.Spans...), data: obj.prefix(min(obj.size, row.Bytes()))}
			d.store.done(held)
			d.mu.Lock()
			d.strays = append(d.strays, s)
			d.mu.Unlock()
		}
		return rowEnd{status: contract.Fault, unprovable: true}
	}
	held, obj, verdict := d.store.lookup(key)
	switch {
	case verdict == contract.Miss && !d.caps.AbsentIsMiss:
		return rowEnd{status: contract.Fault, absent: true}
	case verdict == contract.Miss:
		return rowEnd{status: verdict, absent: true}
	case verdict != contract.Ready:
		return rowEnd{status: verdict}
	}
	d.store.midway(GetDir, key)
	end := rowEnd{status: contract.Fault, object: obj, held: held}
	size := row.Bytes()
	switch {
	case sc.failRead:
		// The read broke half way: the head of the slot may hold part
		// of the object.
		if obj.size <= size {
			obj.readInto(row.Spans, obj.size/2)
		}
	case obj.size == size:
		obj.readInto(row.Spans, size)
		end.status = contract.Ready
	case obj.size < size:
		obj.readInto(row.Spans, obj.size)
	}
	return end
}

// scatter copies data into the spans in order, stopping when data runs
// out. len(data) never exceeds the spans' total length.
func scatter(spans []contract.Span, data []byte) {
	for _, s := range spans {
		if len(data) == 0 {
			return
		}
		n := copy(rawmem.At(s.Addr, s.Len), data)
		data = data[n:]
	}
}
