package redisdrv

import (
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/scheduler"
)

// finish records a part's verdicts once its round trip returned: the
// rows' statuses, the writing marks it ends, and whether its access is
// unprovable.
func (d *Driver) finish(p *part, s sent) {
	unprovable := s.panicked != nil
	op := p.op
	d.mu.Lock()
	defer d.mu.Unlock()
	for j, st := range p.status {
		if p.recorded != nil && p.recorded[j] {
			continue
		}
		if !st.Final() {
			st = contract.Fault // no verdict reached: nothing proves the row arrived
		}
		d.recordRowLocked(p, j, st)
	}
	op.parts--
	op.unprovable = op.unprovable || unprovable
	op.endAccessLocked()
	d.stats.Parts++
	d.stats.RoundTrips += s.trips
	d.stats.Resends += s.resends
	d.stats.Moved += s.moved
	d.stats.Asked += s.asked
	if s.split {
		d.stats.PartsSplit++
	}
	if unprovable {
		d.stats.Panics++
	}
}

// record records, once one node's pipeline of a part returned, the
// verdicts of that node's rows that were not redirected, and calls the
// operation back: the other nodes' rows may still be on their way, and
// the part's access ends only at finish.
func (d *Driver) record(p *part, g *nodeRows) {
	redirected := make(map[int]bool, len(g.redirects))
	for _, rd := range g.redirects {
		redirected[rd.row] = true
	}
	op := p.op
	d.mu.Lock()
	n := 0
	for _, j := range g.rows {
		st := p.status[j]
		if redirected[j] || p.recorded[j] || !st.Final() {
			continue // sent again, or left to finish
		}
		d.recordRowLocked(p, j, st)
		n++
	}
	d.mu.Unlock()
	if n > 0 {
		d.callOnChange(op)
	}
}

// recordRowLocked records part row j's final status st.
func (d *Driver) recordRowLocked(p *part, j int, st contract.RowStatus) {
	op := p.op
	op.rows[p.lo+j] = st
	op.pending--
	d.unmarkLocked(p, j)
	d.countRowLocked(op.dir, st)
	if p.recorded != nil {
		p.recorded[j] = true
	}
}

// cancelPartLocked ends Cancelled every row of a part no worker took: it
// never reached the server.
func (d *Driver) cancelPartLocked(p *part) {
	op := p.op
	for j := range p.len() {
		op.rows[p.lo+j] = contract.Cancelled
		d.unmarkLocked(p, j)
		d.countRowLocked(op.dir, contract.Cancelled)
	}
	op.pending -= p.len()
	op.parts--
	op.endAccessLocked()
}

func (d *Driver) countRowLocked(dir contract.Direction, st contract.RowStatus) {
	if dir == contract.PutDir {
		d.stats.PutRows[st]++
	} else {
		d.stats.GetRows[st]++
	}
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
		d.log.Error("redisdrv: onChange panicked", "dir", op.dir, "panic", p)
	}
}
