package mooncakedrv

import (
	"fmt"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/scheduler"
)

// finish records a part's verdicts, once every SDK call of it returned:
// the rows' statuses, the keys it left open, the writing marks it ends,
// and whether its access is unprovable; then it gives the part back.
func (d *Driver) finish(p *part) {
	op := p.op
	d.mu.Lock()
	for j, st := range p.status {
		if !st.Final() {
			st = contract.Fault // no verdict reached: nothing proves the row arrived
		}
		i := p.lo + j
		op.rows[i] = st
		d.unmarkLocked(p, j)
		if op.dir == contract.PutDir {
			d.stats.PutRows[st]++
			if p.open[j] && d.ledger.add(p.keys.Key(j)) {
				d.stats.KeysLeftOpen = int64(d.ledger.len())
			}
			if p.plan[j] == putLeftOpen && st == contract.Declined {
				d.stats.RowsDeclinedLeftOpen++
			}
		} else {
			d.stats.GetRows[st]++
		}
	}
	op.pending -= p.len()
	op.parts--
	op.unprovable = op.unprovable || p.unprovable
	op.endAccessLocked()
	d.stats.Parts++
	if p.shared {
		d.stats.PartsShared++
	}
	if p.unprovableShared {
		d.stats.PartsUnprovableShared++
	}
	d.mu.Unlock()
	d.releasePart(p)
}

// cancelPartLocked ends Cancelled every row of a part no worker took: it
// never reached the store.
func (d *Driver) cancelPartLocked(p *part) {
	op := p.op
	for j := range p.len() {
		op.rows[p.lo+j] = contract.Cancelled
		d.unmarkLocked(p, j)
		if op.dir == contract.PutDir {
			d.stats.PutRows[contract.Cancelled]++
		} else {
			d.stats.GetRows[contract.Cancelled]++
		}
	}
	op.pending -= p.len()
	op.parts--
	op.endAccessLocked()
}

// notifyLocked calls op's callback on a goroutine of its own, which
// Drain waits for like a worker: the rows Cancel ends are reported
// without calling back into Cancel's caller.
func (d *Driver) notifyLocked(op *operation) {
	if op.onChange != nil {
		d.callbacks.Go(func() { d.callOnChange(op) })
	}
}

// callOnChange calls op's callback outside every lock of the driver. A
// panic in it is logged and dropped, so the worker still counts itself
// finished and Drain stays truthful.
func (d *Driver) callOnChange(op *operation) {
	if op.onChange == nil {
		return
	}
	if p := scheduler.Call(op.onChange); p != nil {
		d.log.Error("mooncakedrv: onChange panicked", "dir", op.dir, "panic", p)
	}
}

// count adds an SDK call to the stats, and a recovered panic.
func (d *Driver) count(c *batchCall, panicked any) {
	d.mu.Lock()
	d.stats.Calls++
	if c.shared {
		d.stats.CallsShared++
	}
	if panicked != nil {
		d.stats.Panics++
	}
	d.mu.Unlock()
}

// logCallFailure logs an SDK call that failed as a whole.
func (d *Driver) logCallFailure(c *batchCall, fn string, err error, panicked any) {
	_, unprovable := callFailure(err, panicked)
	what := fmt.Sprint(err)
	if panicked != nil {
		what = fmt.Sprintf("panic: %v", panicked)
	}
	p, _ := c.row(0)
	d.log.Warn("mooncakedrv: an SDK call failed as a whole; every row of each part in it ends Fault",
		"call", fn, "dir", p.op.dir, "rows", c.len(), "shared", c.shared, "failure", what, "access unprovable", unprovable)
}

// logFaults logs, once per part, how many rows ended Fault and the
// store's answer for the first of them.
func (d *Driver) logFaults(p *part, codes []int64) {
	first, n := -1, 0
	for j, st := range p.status {
		if st == contract.Fault {
			if first < 0 {
				first = j
			}
			n++
		}
	}
	if n == 0 {
		return
	}
	d.log.Warn("mooncakedrv: rows ended Fault", "dir", p.op.dir, "rows", n, "of", p.len(),
		"first key", string(p.keys.Key(first)), "answer", mooncakesdk.Code(codes[first]).String())
}
