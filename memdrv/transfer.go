package memdrv

import (
	"fmt"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
	"github.com/kvshare/kvshare/memdrv/internal/rawmem"
)

// Transfer runs each row of the call against the store (memdrv makes one
// call per row), with the scenario hooks in its path: a gate of Hold or
// HoldKeys, Crash, FailReads, UnprovableGets, and OnRowEnd.
func (c client) Transfer(call *drivekit.Call) {
	for i := range call.Keys {
		call.Ends[i] = c.d.runRow(call, i)
	}
}

// runRow runs one row of a call and says how it ended.
func (d *Driver) runRow(c *drivekit.Call, i int) drivekit.End {
	row, key := c.Rows[i], c.Keys[i]
	d.mu.Lock()
	gate, rowEndHook := d.gateForLocked(c.Dir, key), d.scene.rowEnd
	d.mu.Unlock()
	end := d.execute(c, i, gate)
	if rowEndHook != nil {
		st := rowEndHook(RowEnd{Dir: c.Dir, Key: key, Spans: row.Spans, Object: end.object.bytes(), Status: end.status, OwnWrite: end.ownWrite, Absent: end.absent, Crashed: end.crashed})
		if st.Final() {
			end.status = st
		}
	}
	if end.held != nil {
		d.store.done(end.held) // nothing reads the object any more
	}
	return drivekit.End{Status: end.status, Unprovable: end.unprovable, Broke: end.crashed}
}

// rowEnd is what running a row came to.
type rowEnd struct {
	status     contract.RowStatus
	unprovable bool   // the row's access can never be proven ended
	crashed    bool   // the store call panicked
	object     object // a get's object, when the store held a complete one
	held       *entry // its entry, read until the row's end was recorded
	ownWrite   bool   // a put of this driver was writing the key: the store was not asked
	absent     bool   // a get found no object under the key
}

// execute runs the store call of row i under its key, turning a panic
// inside it into a Fault.
func (d *Driver) execute(c *drivekit.Call, i int, gate *Gate) (end rowEnd) {
	row, key := c.Rows[i], c.Keys[i]
	if c.OwnWrite[i] {
		return rowEnd{status: contract.NotReady, ownWrite: true}
	}
	defer func() {
		if p := recover(); p != nil {
			d.log.Error("memdrv: store call panicked; the row ends Fault", "dir", c.Dir, "key", key, "panic", p)
			end = rowEnd{status: contract.Fault, crashed: true}
		}
	}()
	if gate != nil && !gate.pass(c.Cancelled(), key) {
		return rowEnd{status: contract.Cancelled}
	}
	sc := d.sceneFor(c.Dir, key)
	if sc.crash {
		panic(fmt.Sprintf("memdrv: staged crash in the %s of key %q", c.Dir, key))
	}
	if c.Dir == PutDir {
		return rowEnd{status: d.put(row, key)}
	}
	return d.get(row, key, sc)
}

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
