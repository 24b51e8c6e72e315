package drivekit

import (
	"github.com/kvshare/kvshare/contract"
)

// operation is one admitted Put or Get. Its state is guarded by the
// driver's lock; its batch, keys, direction, hint and callback never
// change. Workers read only the rows' spans from the batch (the
// caller's, kept until access ends, as the contract allows); each row's
// key is in keys, built at admission (see rowKeys).
type operation struct {
	d        *Driver
	dir      contract.Direction
	batch    contract.RowBatch
	keys     []string // the store key of each row
	hint     contract.Hint
	onChange func()

	rows  []contract.RowStatus
	taken []bool // a worker took the row (it will settle it)
	// own says, for a put row a worker took, that another put of this
	// driver was writing its key then (nil for a get). Set under the
	// lock by the taker, read by it alone.
	own        []bool
	pending    int // rows not final
	access     contract.Access
	unprovable bool          // a row could not prove its access ended
	cancelled  chan struct{} // closed by the first Cancel
}

func newOperation(d *Driver, dir contract.Direction, b contract.RowBatch, keys []string, h contract.Hint, onChange func()) *operation {
	return &operation{
		d:         d,
		dir:       dir,
		batch:     b,
		keys:      keys,
		hint:      h,
		onChange:  onChange,
		rows:      make([]contract.RowStatus, len(b.Rows)),
		taken:     make([]bool, len(b.Rows)),
		pending:   len(b.Rows),
		cancelled: make(chan struct{}),
		own:       ownWrites(dir, len(b.Rows)),
	}
}

// ownWrites is a put's own-write flags, none set; nil for a get.
func ownWrites(dir contract.Direction, n int) []bool {
	if dir != contract.PutDir {
		return nil
	}
	return make([]bool, n)
}

// Poll appends one status per row, in batch order, to dst[:0] and
// returns them with the access state, all read in one step under the
// driver's lock: it allocates only when dst is too short, and never
// keeps dst. Row results are recorded before access leaves Open, in the
// same step as the last of them.
func (op *operation) Poll(dst []contract.RowStatus) contract.OpState {
	op.d.mu.Lock()
	defer op.d.mu.Unlock()
	return contract.OpState{Rows: append(dst[:0], op.rows...), Access: op.access}
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
	for i, r := range op.rows {
		if r == contract.Pending && !op.taken[i] {
			op.finalLocked(i, st)
			changed++
			if op.dir == contract.PutDir {
				op.d.unqueuePutLocked(op.keys[i])
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
	op.rows[i] = st
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
}

// markOwnWrite records that put row i, taken, is an own write.
func (op *operation) markOwnWrite(i int) { op.own[i] = true }

// ownWrite reports whether row i was taken as an own write.
func (op *operation) ownWrite(i int) bool { return op.own != nil && op.own[i] }

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
