package drivekit

import (
	"context"
	"fmt"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/scheduler"
)

// startPool starts the gets-first pool of Options.GetsFirst.
func (d *Driver) startPool() {
	pool, err := scheduler.New(d.workers, d.runPooled)
	if err != nil { // normal() keeps workers at one or more
		panic(fmt.Sprintf("%s: the gets-first pool: %v", d.name, err))
	}
	d.pool = pool
}

// queueLocked queues p for a worker: on the pool, by its kind, or at
// the end of the FIFO queue, whose workers it starts.
func (d *Driver) queueLocked(p part) {
	if d.pool == nil {
		d.queue = append(d.queue, p)
		return
	}
	kind := scheduler.Get
	if p.op.dir == contract.PutDir {
		kind = scheduler.Put
	}
	if err := d.pool.Submit(kind, p); err != nil {
		// Only a Drain stops the pool, and admission is refused from
		// then on: a refusal here is a broken rule of the kit itself.
		panic(fmt.Sprintf("%s: the gets-first pool refused a part: %v", d.name, err))
	}
	d.pooled++
}

// runPooled is the pool's run: it takes p as a FIFO worker takes a
// part, unless p's rows ended while it was queued, or a Drain or
// Recycle began, which end Cancelled the rows no worker took.
func (d *Driver) runPooled(p part) {
	c := calls.Get().(*Call)
	defer calls.Put(c)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pooled--
	switch {
	case d.draining || d.recycling:
		if p.op.rows[p.lo] == contract.Pending && p.op.cancelUntakenLocked(contract.Cancelled) {
			d.notifyLocked(p.op)
		}
		d.wakeLocked()
	case !d.takePartLocked(p, c):
		d.wakeLocked()
	default:
		d.mu.Unlock()
		d.runTaken(p, c)
	}
}

// unpoolLocked takes every part still queued on the pool out of it,
// ending Cancelled the rows no worker took; it returns the operations
// it changed.
func (d *Driver) unpoolLocked() []*operation {
	if d.pool == nil {
		return nil
	}
	var hit []*operation
	for _, p := range d.pool.Cancel(func(part) bool { return true }) {
		d.pooled--
		if p.op.rows[p.lo] == contract.Pending && p.op.cancelUntakenLocked(contract.Cancelled) {
			hit = append(hit, p.op)
		}
	}
	return hit
}

// stopPool stops the pool's goroutines within ctx, after a Drain
// refused every later call: it reports whether every one has left its
// loop (true at once for FIFO workers, which stop by themselves).
// d.mu is held on entry and on return, let go while it waits: the
// parts running need it to settle.
func (d *Driver) stopPoolLocked(ctx context.Context) bool {
	if d.pool == nil {
		return true
	}
	d.mu.Unlock()
	defer d.mu.Lock()
	return d.pool.Stop(ctx)
}

// poolPause holds the pool's workers back as Pause holds the FIFO
// workers; it returns the pool's resume (a no-op without a pool).
func (d *Driver) poolPause() (resume func()) {
	if d.pool == nil {
		return func() {}
	}
	return d.pool.Pause()
}
