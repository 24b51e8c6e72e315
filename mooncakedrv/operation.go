package mooncakedrv

import (
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/rowbatch"
)

// rowFlag is what admission learnt about one row of a put.
type rowFlag uint8

const (
	// rowWriting: a put of this driver was writing the row's key when the
	// row was admitted: the row ends NotReady without an SDK call.
	rowWriting rowFlag = 1 << iota
	// rowMarked: the row marked its key in Driver.writing, and unmarks it
	// when it ends.
	rowMarked
)

// operation is one admitted Put or Get: the batch cut into parts. Its
// state is guarded by the driver's lock; its batch, direction and
// callback never change.
type operation struct {
	d        *Driver
	dir      contract.Direction
	batch    contract.RowBatch
	onChange func()

	rows       []contract.RowStatus
	flags      []rowFlag
	pending    int // rows not final
	parts      int // parts not finished: queued or running
	access     contract.Access
	unprovable bool // an SDK call of a part failed as a whole or may still transfer
	// cancelled: Cancel was called. Admission queues no part built after
	// it; those end Cancelled, as the queued ones Cancel removes.
	cancelled bool
}

// Poll appends one status per row to dst[:0], in batch order, with the
// access state. It allocates nothing once dst has room for every row.
func (op *operation) Poll(dst []contract.RowStatus) contract.OpState {
	op.d.mu.Lock()
	defer op.d.mu.Unlock()
	return contract.OpState{Rows: append(dst[:0], op.rows...), Access: op.access}
}

// Cancel ends Cancelled the rows of every part no worker took yet; parts
// already inside the SDK run on (Mooncake has no cancel). The callback for
// the rows it ends runs on a goroutine of the driver, never in Cancel,
// which returns at once.
func (op *operation) Cancel() {
	d := op.d
	d.mu.Lock()
	op.cancelled = true // parts admission has still to queue end Cancelled instead
	d.mu.Unlock()
	removed := d.pool.Cancel(func(p *part) bool { return p.owner.Load() == op })
	if len(removed) == 0 {
		return
	}
	d.mu.Lock()
	for _, p := range removed {
		d.cancelPartLocked(p)
	}
	d.notifyLocked(op)
	d.mu.Unlock()
	for _, p := range removed {
		d.releasePart(p)
	}
}

// accessLocked returns the access state.
func (op *operation) accessLocked() contract.Access { return op.access }

// endAccessLocked moves access out of Open once no part is queued or
// running: every SDK call the operation made has returned, so the proof
// (or its absence) is complete.
func (op *operation) endAccessLocked() {
	if op.parts > 0 || op.pending > 0 || op.access != contract.Open {
		return
	}
	d := op.d
	delete(d.open, op)
	if op.unprovable {
		op.access = contract.Unprovable
		d.unprovable = append(d.unprovable, op)
		d.stats.RowsUnprovable += int64(len(op.rows))
	} else {
		op.access = contract.Ended
	}
}

// rowIn returns the first row with a span overlapping r, or -1.
func (op *operation) rowIn(r contract.SlotRegion) int { return rowbatch.FirstRowIn(op.batch, r) }
