package redisdrv

import (
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/rowbatch"
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
	writing    []bool // put: the row's key was being written by another put of this driver at admission
	pending    int    // rows not final
	parts      int    // parts not finished: queued or running
	access     contract.Access
	unprovable bool // a part's round trip panicked inside the client
}

// Poll appends one status per row to dst[:0], in batch order, with the
// access state. It allocates nothing once dst has room for every row.
func (op *operation) Poll(dst []contract.RowStatus) contract.OpState {
	op.d.mu.Lock()
	defer op.d.mu.Unlock()
	return contract.OpState{Rows: append(dst[:0], op.rows...), Access: op.access}
}

// Cancel ends Cancelled the rows of every part no worker took yet; a
// part whose round trip runs goes on to its end (a pipeline once written
// is the server's). The callback for the rows it ends runs on a
// goroutine of the driver, never in Cancel, which returns at once.
func (op *operation) Cancel() {
	d := op.d
	removed := d.pool.Cancel(func(p *part) bool { return p.op == op })
	if len(removed) == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range removed {
		d.cancelPartLocked(p)
	}
	d.notifyLocked(op)
}

// endAccessLocked moves access out of Open once no part is queued or
// running: every round trip the operation made has returned, so the
// proof (or its absence) is complete.
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
