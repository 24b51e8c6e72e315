package drivekit

import (
	"github.com/kvshare/kvshare/contract"
)

// operation is one admitted Put or Get. Its state is guarded by the
// driver's lock; its batch, direction, hint and callback never change.
// Workers read only the rows' spans from the batch (the caller's, kept
// until access ends, as the contract allows); each row's key is in
// keys, built at admission (see rowKeys), kept until the operation is
// done with them (see releaseLocked).
type operation struct {
	d        *Driver
	dir      contract.Direction
	batch    contract.RowBatch
	keys     []string  // the store key of each row
	ents     []*putKey // a put row's entry in the driver's putKeys while it holds one
	rk       *rowKeys  // what keys and ents are over; nil once given back
	hint     contract.Hint
	onChange func()

	// rows is each row's status, with the kit's flags beside it; nil
	// once every row is final with one status, final (see
	// releaseLocked).
	rows       []rowState
	final      contract.RowStatus
	pending    int // rows not final
	calls      int // parts of the operation taken whose store call is not recorded yet
	access     contract.Access
	unprovable bool          // a row could not prove its access ended
	cancelled  chan struct{} // closed by the first Cancel
}

// rowState is one row's [contract.RowStatus] in its low bits, and the
// kit's flags: one byte a row.
type rowState uint8

const (
	// rowTaken: a worker took the row (it will settle it).
	rowTaken rowState = 1 << 6
	// rowOwn: a put row a worker took while another put of this
	// driver was writing its key. Set under the lock by the taker.
	rowOwn rowState = 1 << 7
	// rowStatus masks the row's status.
	rowStatus rowState = rowTaken - 1
)

func newOperation(d *Driver, dir contract.Direction, b contract.RowBatch, rk *rowKeys, h contract.Hint, onChange func()) *operation {
	op := &operation{
		d:         d,
		dir:       dir,
		batch:     b,
		keys:      rk.keys,
		rk:        rk,
		hint:      h,
		onChange:  onChange,
		rows:      rk.rowStates(len(b.Rows)),
		pending:   len(b.Rows),
		cancelled: make(chan struct{}),
	}
	if dir == contract.PutDir {
		op.ents = rk.entries(len(b.Rows))
	}
	return op
}

// status is row i's status.
func (op *operation) status(i int) contract.RowStatus {
	if op.rows == nil {
		return op.final
	}
	return contract.RowStatus(op.rows[i] & rowStatus)
}

// waiting reports whether row i is pending and no worker took it.
func (op *operation) waiting(i int) bool {
	return op.rows != nil && op.rows[i]&^rowOwn == rowState(contract.Pending)
}

// Poll appends one status per row, in batch order, to dst[:0] and
// returns them with the access state, all read in one step under the
// driver's lock: it allocates only when dst is too short, and never
// keeps dst. Row results are recorded before access leaves Open, in the
// same step as the last of them.
func (op *operation) Poll(dst []contract.RowStatus) contract.OpState {
	op.d.mu.Lock()
	defer op.d.mu.Unlock()
	n := len(op.batch.Rows)
	dst = dst[:0]
	if cap(dst) < n {
		dst = make([]contract.RowStatus, 0, n)
	}
	if op.rows == nil {
		for range n {
			dst = append(dst, op.final)
		}
	} else {
		for _, r := range op.rows {
			dst = append(dst, contract.RowStatus(r&rowStatus))
		}
	}
	return contract.OpState{Rows: dst, Access: op.access}
}

// Cancel ends Cancelled every row no worker took, when the driver
// declares Cancel; otherwise it does nothing. Rows a worker took run on
// (the store sees [Call.Cancelled]). The callback for the rows it ends
// runs on a goroutine of the driver, never in Cancel.
func (op *operation) Cancel() {
	d := op.d
	if !d.caps.Cancel {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	select {
	case <-op.cancelled:
	default:
		close(op.cancelled)
	}
	if op.cancelUntakenLocked(contract.Cancelled) > 0 {
		d.notifyLocked(op)
	}
}

// cancelUntakenLocked gives every row no worker took the final status st
// (their queue entries are skipped later) and ends access if that was
// the last row. It returns how many rows changed.
func (op *operation) cancelUntakenLocked(st contract.RowStatus) int {
	changed := 0
	for i := range op.rows {
		if op.waiting(i) {
			op.finalLocked(i, st)
			changed++
			if op.dir == contract.PutDir {
				op.d.puts.unqueue(op.ents[i])
			}
		}
	}
	if changed > 0 {
		op.endAccessLocked()
	}
	return changed
}

// finalLocked records row i's final status st.
func (op *operation) finalLocked(i int, st contract.RowStatus) {
	op.rows[i] = op.rows[i]&^rowStatus | rowState(st)
	op.pending--
	if op.dir == contract.PutDir {
		op.d.stats.PutRows[st]++
	} else {
		op.d.stats.GetRows[st]++
	}
}

// endAccessLocked moves access out of Open once every row is final. A
// row is final only after the worker that took it is done with its
// memory, so this is the proof the driver has.
func (op *operation) endAccessLocked() {
	if op.pending > 0 || op.access != contract.Open {
		return
	}
	d := op.d
	delete(d.open, op)
	if op.unprovable {
		op.access = contract.Unprovable
		d.unprovable = append(d.unprovable, op)
	} else {
		op.access = contract.Ended
	}
	d.wakeLocked()
	op.releaseLocked()
}

// releaseLocked gives the operation's per-row scratch back for reuse
// once nothing can read it: access Ended (a row that could not prove
// its access ended keeps it for good), and no store call holding it
// unrecorded (access may end while one still runs, its rows settled
// and the rest cancelled). Every entry in the driver's putKeys left
// with its row's end, and the set keeps its own copies of keys; a
// Call's keys are cleared before its parts are recorded. Without
// [Options.ReuseKeys] the buffer and strings stay with the operation.
// The states go too when every row ended with one status (the common
// case): Poll answers that status for each row, from op.final; a part
// still queued reads no row waiting.
func (op *operation) releaseLocked() {
	if op.rk == nil || op.access != contract.Ended || op.calls > 0 {
		return
	}
	rk := op.rk
	op.rk, op.ents = nil, nil
	if op.d.reuseKeys {
		op.keys = nil
	}
	if st, ok := op.uniform(); ok {
		op.rows, op.final = nil, st
	} else {
		rk.states = nil // they stay the operation's
	}
	op.d.keepKeysLocked(rk)
}

// uniform returns the status every row has, if they all have one.
func (op *operation) uniform() (contract.RowStatus, bool) {
	if len(op.rows) == 0 {
		return 0, false
	}
	st := op.rows[0] & rowStatus
	for _, r := range op.rows[1:] {
		if r&rowStatus != st {
			return 0, false
		}
	}
	return contract.RowStatus(st), true
}

// ownWrite reports whether row i was taken as an own write.
func (op *operation) ownWrite(i int) bool { return op.rows[i]&rowOwn != 0 }

// rowOf returns the first row with a span overlapping r, or -1.
func (op *operation) rowOf(r contract.SlotRegion) int {
	for i := range op.batch.Rows {
		if op.rowIn(i, r) {
			return i
		}
	}
	return -1
}

// rowIn reports whether a span of row i overlaps r.
func (op *operation) rowIn(i int, r contract.SlotRegion) bool {
	lo, hi := r.Base, r.Base+uintptr(r.Len)
	for _, s := range op.batch.Rows[i].Spans {
		if s.Addr < hi && s.End() > lo {
			return true
		}
	}
	return false
}
