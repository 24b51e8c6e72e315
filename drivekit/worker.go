package drivekit

import (
	"github.com/kvshare/kvshare/contract"
)

// part is one store call's worth of an operation, rows [lo, hi),
// queued for a worker. A part is taken whole: its rows are all pending
// or all final (Cancel and a broken call end every untaken row of the
// operation). With JoinCalls a worker takes several parts into one
// store call.
type part struct {
	op     *operation
	lo, hi int
	bytes  int64 // the rows' bytes
}

// spawnLocked starts workers for queued parts, up to the driver's
// limit. Workers exit when they find nothing to take, so an idle driver
// runs no goroutine and there is nothing to stop.
func (d *Driver) spawnLocked() {
	if d.paused > 0 {
		return
	}
	for n := len(d.queue) - d.head; n > 0 && d.running < d.workers; n-- {
		d.running++
		go d.work()
	}
}

// work takes parts in order until there are none (or the driver is
// paused), running each to its rows' final statuses.
func (d *Driver) work() {
	d.mu.Lock()
	c := d.takeCallLocked() // the worker's own, reused from call to call
	for {
		p, ok := d.takeLocked()
		if !ok {
			d.running--
			d.keepCallLocked(c)
			d.mu.Unlock()
			return
		}
		d.busy++
		d.mu.Unlock()
		c.group = append(c.group[:0], p)
		d.runGroup(c.group, c)
		d.mu.Lock()
		d.busy--
		d.wakeLocked()
	}
}

// takeCallLocked returns a Call for a worker: one the driver kept, with
// its slices, or a new one.
func (d *Driver) takeCallLocked() *Call { return takeSpare(&d.idleCalls) }

// keepCallLocked keeps c, done with, for the next worker: at most one a
// worker, kept between the bursts that start and end workers. The
// driver's own list rather than a [sync.Pool]: a pool's item given back
// on one processor is seldom found by a worker on another.
func (d *Driver) keepCallLocked(c *Call) { keepSpare(&d.idleCalls, c, d.workers) }

// takeLocked pops the next part that is still pending and marks its
// rows taken.
func (d *Driver) takeLocked() (part, bool) {
	for d.paused == 0 && d.head < len(d.queue) {
		p := d.queue[d.head]
		d.queue[d.head] = part{}
		d.head++
		if d.head == len(d.queue) {
			d.queue, d.head = d.queue[:0], 0
		}
		if d.takePartLocked(p) {
			return p, true
		}
	}
	return part{}, false
}

// takePartLocked marks the rows of p taken, and for a put its keys as
// being written (or, when another put of this driver writes one now,
// the row as an own write); it reports false, taking nothing, when p's
// rows are no longer pending (cancelled, or faulted after a broken
// call, while queued).
func (d *Driver) takePartLocked(p part) bool {
	op := p.op
	if !op.waiting(p.lo) {
		return false
	}
	put := op.dir == contract.PutDir
	for i := p.lo; i < p.hi; i++ {
		op.rows[i] |= rowTaken
		if put && !d.puts.take(op.ents[i]) {
			op.rows[i] |= rowOwn
		}
	}
	op.calls++
	d.stats.Parts++
	return true
}

// runGroup makes the store calls of taken parts of one direction: as
// few as their keys allow (see apart), each recorded and reported
// before the next.
func (d *Driver) runGroup(group []part, c *Call) {
	c.d = d
	for rest := group; len(rest) > 0; {
		var now []part
		now, rest = c.apart(rest)
		c.fill(now)
		d.run(now, c)
	}
	clear(c.group) // a kept Call pins no operation
	c.group = c.group[:0]
}

// run calls the store for parts filled into c, records their rows'
// final statuses, and calls their operations' callbacks.
func (d *Driver) run(parts []part, c *Call) {
	d.transfer(c)
	shared := len(parts) > 1
	d.mu.Lock()
	// The store is done with the call: its keys go before any of its
	// operations may give its key buffer back.
	clear(c.Keys)
	c.Keys = c.Keys[:0]
	d.stats.Calls++
	if shared {
		d.stats.CallsShared++
		d.stats.PartsShared += int64(len(parts))
	}
	k := 0
	for _, p := range parts {
		op := p.op
		broke := false
		for row := p.lo; row < p.hi; row, k = row+1, k+1 {
			e := c.Ends[k]
			broke = broke || e.Broke
			if !c.settled[k] {
				d.recordLocked(op, row, e, c.OwnWrite[k])
			}
		}
		op.calls--
		if broke {
			op.cancelUntakenLocked(contract.Fault)
		}
	}
	for _, p := range parts {
		p.op.endAccessLocked()
		p.op.releaseLocked()
	}
	d.mu.Unlock()
	for i, p := range parts {
		if i == 0 || parts[i-1].op != p.op {
			d.callOnChange(p.op)
		}
	}
	c.clear()
}

// recordLocked records the end e of row of op, taken by a worker: its
// key no longer being written (unless the row was an own write), its
// final status (Fault when e's is not final), its proof.
func (d *Driver) recordLocked(op *operation, row int, e End, own bool) {
	if op.dir == contract.PutDir && !own {
		d.puts.written(op.ents[row])
	}
	if !e.Status.Final() {
		e.Status = contract.Fault
	}
	op.finalLocked(row, e.Status)
	op.unprovable = op.unprovable || e.Unprovable
}

// transfer runs the store call, turning a panic inside it into a Fault
// of every row of the call, as a broken call.
func (d *Driver) transfer(c *Call) {
	defer func() {
		if p := recover(); p != nil {
			d.log.Error(d.name+": store call panicked; its rows end Fault", "dir", c.Dir, "keys", len(c.Keys), "panic", p)
			d.mu.Lock()
			d.stats.Panics++
			d.mu.Unlock()
			for i := range c.Ends {
				c.Ends[i] = End{Status: contract.Fault, Broke: true}
			}
		}
	}()
	d.store.Transfer(c)
}

// notifyLocked calls op's callback on a goroutine of its own, which
// counts as a worker until the callback returns: the changes Cancel and
// Drain make are reported without calling back into the caller's
// goroutine, and Drain still waits for the callback.
func (d *Driver) notifyLocked(op *operation) {
	if op.onChange == nil {
		return
	}
	d.busy++
	go func() {
		d.callOnChange(op)
		d.mu.Lock()
		d.busy--
		d.wakeLocked()
		d.mu.Unlock()
	}()
}

// callOnChange calls op's callback, outside any lock of the driver. A
// panic in the callback is logged and dropped, so the worker still
// counts itself finished and Drain stays truthful.
func (d *Driver) callOnChange(op *operation) {
	if op.onChange == nil {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			d.log.Error(d.name+": onChange panicked", "dir", op.dir, "panic", p)
		}
	}()
	op.onChange()
}
