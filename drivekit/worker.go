package drivekit

import (
	"sync"

	"github.com/kvshare/kvshare/contract"
)

// part is one store call of an operation, rows [lo, hi), queued for a
// worker. A part is taken whole: its rows are all pending or all final
// (Cancel and a broken call end every untaken row of the operation).
type part struct {
	op     *operation
	lo, hi int
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
	c := calls.Get().(*Call) // the worker's own, reused from call to call
	d.mu.Lock()
	for {
		p, ok := d.takeLocked(c)
		if !ok {
			d.running--
			d.mu.Unlock()
			calls.Put(c)
			return
		}
		d.mu.Unlock()
		d.runTaken(p, c)
	}
}

// runTaken runs a taken part (see run) and then counts its worker
// finished with it; it returns with d.mu held.
func (d *Driver) runTaken(p part, c *Call) {
	d.run(p, c)
	c.Keys, c.Rows, c.Hint, c.cancelled = nil, nil, nil, nil // pin no caller's batch
	// The part's callback has returned: only now does the worker count
	// itself finished with it.
	d.mu.Lock()
	d.busy--
	d.wakeLocked()
}

// calls are the workers' Calls, with their OwnWrite and Ends, kept
// between the bursts that start and end workers.
var calls = sync.Pool{New: func() any { return new(Call) }}

// takeLocked pops the next part that is still pending, marks its rows
// taken and fills c for it.
func (d *Driver) takeLocked(c *Call) (part, bool) {
	for d.paused == 0 && d.head < len(d.queue) {
		p := d.queue[d.head]
		d.queue[d.head] = part{}
		d.head++
		if d.head == len(d.queue) {
			d.queue, d.head = d.queue[:0], 0
		}
		if d.takePartLocked(p, c) {
			return p, true
		}
	}
	return part{}, false
}

// takePartLocked marks the rows of p taken and fills c for it; it
// reports false, taking nothing, when p's rows are no longer pending
// (cancelled, or faulted after a broken call, while queued).
func (d *Driver) takePartLocked(p part, c *Call) bool {
	op := p.op
	if op.rows[p.lo] != contract.Pending {
		return false
	}
	n := p.hi - p.lo
	c.Dir, c.Hint, c.cancelled = op.dir, op.hint, op.cancelled
	c.Keys, c.Rows = op.keys[p.lo:p.hi], op.batch.Rows[p.lo:p.hi]
	c.OwnWrite, c.Ends = grow(c.OwnWrite, n), grow(c.Ends, n)
	for i := p.lo; i < p.hi; i++ {
		op.taken[i] = true
		if op.dir != contract.PutDir {
			continue
		}
		key := op.keys[i]
		d.unqueuePutLocked(key)
		if _, busy := d.writing[key]; busy {
			c.OwnWrite[i-p.lo] = true
		} else {
			d.writing[key] = struct{}{}
		}
	}
	d.busy++
	d.stats.Calls++
	return true
}

// grow returns s resliced to n zero elements, reallocated if too short.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// unqueuePutLocked counts one row of key as no longer waiting for a
// worker: taken, or ended before a worker took it.
func (d *Driver) unqueuePutLocked(key string) {
	if n := d.queuedPuts[key]; n > 1 {
		d.queuedPuts[key] = n - 1
	} else {
		delete(d.queuedPuts, key)
	}
}

// run calls the store for a taken part, records its rows' final
// statuses, and calls the operation's callback.
func (d *Driver) run(p part, c *Call) {
	d.transfer(c)
	op := p.op
	d.mu.Lock()
	broke := false
	for i := range c.Ends {
		e, row := c.Ends[i], p.lo+i
		if op.dir == contract.PutDir && !c.OwnWrite[i] {
			delete(d.writing, op.keys[row])
		}
		if !e.Status.Final() {
			e.Status = contract.Fault
		}
		op.finalLocked(row, e.Status)
		op.unprovable = op.unprovable || e.Unprovable
		broke = broke || e.Broke
	}
	op.endAccessLocked()
	if broke {
		op.cancelUntakenLocked(contract.Fault)
	}
	d.mu.Unlock()
	d.callOnChange(op)
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
