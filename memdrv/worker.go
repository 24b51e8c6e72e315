package memdrv

import (
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// task is one row of an operation, queued for a worker.
type task struct {
	op  *operation
	row int

	// Set when a worker takes the row.
	gate     *Gate // the gate the row blocks on, if its direction or key is held
	notReady bool  // a put of this driver is writing the key now
	marked   bool  // this row marked its key in Driver.writing
	rowEnd   func(RowEnd) contract.RowStatus
}

// spawnLocked starts workers for queued rows, up to the driver's limit.
// Workers exit when they find nothing to take, so an idle driver runs no
// goroutine and there is nothing to stop.
func (d *Driver) spawnLocked() {
	if d.scene.paused > 0 {
		return
	}
	for n := len(d.queue) - d.head; n > 0 && d.running < d.workers; n-- {
		d.running++
		go d.work()
	}
}

// work takes rows in FIFO order until there are none (or the driver is
// paused), running each to its final status.
func (d *Driver) work() {
	d.mu.Lock()
	for {
		t, ok := d.takeLocked()
		if !ok {
			d.running--
			d.mu.Unlock()
			return
		}
		d.mu.Unlock()
		d.runRow(t)
		// The row's callback has returned: only now does this worker
		// count itself finished with the row.
		d.mu.Lock()
		d.busy--
		d.wakeLocked()
	}
}

// takeLocked pops the next row that is still pending, marking it taken.
func (d *Driver) takeLocked() (task, bool) {
	for d.scene.paused == 0 && d.head < len(d.queue) {
		t := d.queue[d.head]
		d.queue[d.head] = task{}
		d.head++
		if d.head == len(d.queue) {
			d.queue, d.head = d.queue[:0], 0
		}
		if t.op.rows[t.row] != contract.Pending {
			continue // cancelled, or faulted after a crash, while queued
		}
		t.op.taken[t.row] = true
		if t.op.dir == PutDir {
			d.unqueuePutLocked(t.op.keys[t.row])
		}
		d.busy++
		t.gate = d.gateForLocked(t.op.dir, t.op.keys[t.row])
		t.rowEnd = d.scene.rowEnd
		if t.op.dir == PutDir {
			key := t.op.keys[t.row]
			if _, busy := d.writing[key]; busy {
				t.notReady = true
			} else {
				d.writing[key] = struct{}{}
				t.marked = true
			}
		}
		return t, true
	}
	return task{}, false
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

// runRow runs a taken row, records its final status, and calls the
// operation's callback.
func (d *Driver) runRow(t task) {
	row, key := t.op.batch.Rows[t.row], t.op.keys[t.row]
	end := d.execute(t, row, key)
	if t.rowEnd != nil {
		st := t.rowEnd(RowEnd{Dir: t.op.dir, Key: key, Spans: row.Spans, Object: end.object.bytes(), Status: end.status, OwnWrite: end.ownWrite, Absent: end.absent, Crashed: end.crashed})
		if st.Final() {
			end.status = st
		}
	}
	if end.held != nil {
		d.store.done(end.held) // nothing reads the object any more
	}
	d.mu.Lock()
	if t.marked {
		delete(d.writing, key)
	}
	t.op.settleLocked(t.row, end.status, end.unprovable)
	if end.crashed {
		t.op.cancelUntakenLocked(contract.Fault)
	}
	d.mu.Unlock()
	d.callOnChange(t.op)
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

// execute runs the store call of a taken row under its key, turning a
// panic inside it into a Fault.
func (d *Driver) execute(t task, row contract.Row, key string) (end rowEnd) {
	if t.notReady {
		return rowEnd{status: contract.NotReady, ownWrite: true}
	}
	defer func() {
		if p := recover(); p != nil {
			d.log.Error("memdrv: store call panicked; the row ends Fault", "dir", t.op.dir, "key", key, "panic", p)
			end = rowEnd{status: contract.Fault, crashed: true}
		}
	}()
	if t.gate != nil && !t.gate.pass(t.op, key) {
		return rowEnd{status: contract.Cancelled}
	}
	sc := d.sceneFor(t.op.dir, key)
	if sc.crash {
		panic(fmt.Sprintf("memdrv: staged crash in the %s of key %q", t.op.dir, key))
	}
	if t.op.dir == PutDir {
		return rowEnd{status: d.put(row, key)}
	}
	return d.get(row, key, sc)
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
			d.log.Error("memdrv: onChange panicked", "dir", op.dir, "panic", p)
		}
	}()
	op.onChange()
}
