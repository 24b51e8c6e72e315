package drivekit

import (
	"sync"

	"github.com/kvshare/kvshare/contract"
)

// Pause stops the workers from taking new calls until resume is called:
// operations admitted meanwhile stay unstarted (Cancel and Drain end
// their rows Cancelled). Calls already taken run on. Pauses nest:
// workers take calls again once every pause was resumed. resume is
// idempotent. Tests use it to stage admitted, unstarted work.
func (d *Driver) Pause() (resume func()) {
	d.mu.Lock()
	d.paused++
	resumePool := d.poolPause()
	d.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			d.mu.Lock()
			d.paused--
			d.spawnLocked()
			d.mu.Unlock()
			resumePool()
		})
	}
}

// Live returns the number of operations whose access is Open now.
func (d *Driver) Live() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.open)
}

// Unprovable returns the number of operations whose access is
// Unprovable now (until a Recycle ends it).
func (d *Driver) Unprovable() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.unprovable)
}

// Busy returns the number of calls a worker is running now plus the
// callbacks being delivered: what Drain waits for.
func (d *Driver) Busy() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.busy
}

// Workers returns the worker goroutines running now (with
// [Options.GetsFirst]: running a call) and the most the driver runs, and whether a row of key waits for a worker (pending,
// not taken), all read in one step.
func (d *Driver) Workers(key string) (running, limit int, waiting bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for op := range d.open {
		for i, k := range op.keys {
			if k == key && op.waiting(i) {
				waiting = true
			}
		}
	}
	running = d.running
	if d.pool != nil {
		running = d.pool.Running()
	}
	return running, d.workers, waiting
}

// RegionRows counts the rows whose spans overlap one region, by where
// their operation stands (see [Driver.RowsIn]).
type RegionRows struct {
	// Queued rows belong to an operation with access Open and no worker
	// took them yet.
	Queued int
	// Running rows were taken by a worker and are not final yet.
	Running int
	// Unprovable rows belong to an operation whose access is Unprovable.
	Unprovable int
}

// RowsIn counts, for the region r, the rows with a span overlapping it
// that keep it busy: rows of operations with access Open, queued or
// running, and rows of Unprovable operations. Final rows of Open
// operations are not counted, though their operation keeps the region
// busy all the same.
func (d *Driver) RowsIn(r contract.SlotRegion) RegionRows {
	d.mu.Lock()
	defer d.mu.Unlock()
	var n RegionRows
	for op := range d.open {
		for i := range op.batch.Rows {
			switch {
			case !op.rowIn(i, r) || op.status(i) != contract.Pending:
			case !op.waiting(i):
				n.Running++
			default:
				n.Queued++
			}
		}
	}
	for _, op := range d.unprovable {
		for i := range op.batch.Rows {
			if op.rowIn(i, r) {
				n.Unprovable++
			}
		}
	}
	return n
}

// Admitted returns the number of operations admitted in dir so far.
func (d *Driver) Admitted(dir contract.Direction) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if dir == contract.PutDir {
		return int(d.stats.PutOps)
	}
	return int(d.stats.GetOps)
}

// HintsSeen returns how many admitted gets carried a non-nil hint, and
// the last such hint.
func (d *Driver) HintsSeen() (n int, last contract.Hint) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return int(d.stats.Hints), d.lastHint
}
