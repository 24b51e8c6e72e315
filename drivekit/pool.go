package drivekit

import (
	"context"
	"fmt"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/scheduler"
)

// startPool starts the gets-first pool of Options.GetsFirst, its
// workers taking parts in groups when JoinCalls is set, at most limit
// groups of a direction at once when above 0.
func (d *Driver) startPool(limit int) {
	pool, err := scheduler.NewGrouped(d.workers, scheduler.Grouping[part]{Join: d.joins, Limit: limit}, d.runPooled)
	if err != nil { // normal() keeps workers at one or more, limit at 0 or more
		panic(fmt.Sprintf("%s: the gets-first pool: %v", d.name, err))
	}
	d.pool = pool
}

// tally is what a group being joined holds so far.
type tally struct {
	rows  int
	bytes int64
}

// joins is the pool's join (under the pool's lock, one group at a
// time): with JoinCalls, a queued part joins the group while their rows
// together stay within CallRows and CallBytes; a hinted get joins none
// and is joined by none. The group's tally is kept in d.tally.
func (d *Driver) joins(group []part, next part) bool {
	if !d.join {
		return false
	}
	head := group[0]
	if len(group) == 1 {
		d.tally = tally{rows: head.hi - head.lo, bytes: head.bytes}
	}
	t := tally{rows: d.tally.rows + next.hi - next.lo, bytes: d.tally.bytes + next.bytes}
	if head.op.hint != nil || next.op.hint != nil || t.rows > d.rows || (d.bytes > 0 && t.bytes > d.bytes) {
		return false
	}
	d.tally = t
	return true
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

// runPooled is the pool's run: it takes the group's parts as a FIFO
// worker takes a part, skipping those whose rows ended while queued,
// unless a Drain or Recycle began, which end Cancelled the rows no
// worker took; then it runs them (see runGroup).
func (d *Driver) runPooled(group []part) {
	d.mu.Lock()
	d.pooled -= len(group)
	if d.draining || d.recycling {
		for _, p := range group {
			if p.op.waiting(p.lo) && p.op.cancelUntakenLocked(contract.Cancelled) > 0 {
				d.notifyLocked(p.op)
			}
		}
		d.wakeLocked()
		d.mu.Unlock()
		return
	}
	c := d.takeCallLocked()
	c.group = c.group[:0]
	for _, p := range group {
		if d.takePartLocked(p) {
			c.group = append(c.group, p)
		}
	}
	if len(c.group) == 0 {
		d.keepCallLocked(c)
		d.wakeLocked()
		d.mu.Unlock()
		return
	}
	d.busy++
	d.mu.Unlock()
	d.runGroup(c.group, c)
	d.mu.Lock()
	d.keepCallLocked(c)
	d.busy--
	d.wakeLocked()
	d.mu.Unlock()
}

// unpoolLocked takes every part still queued on the pool out of it,
// ending Cancelled the rows no worker took; it returns the operations
// it changed and how many rows.
func (d *Driver) unpoolLocked() (hit []*operation, rows int) {
	if d.pool == nil {
		return nil, 0
	}
	for _, p := range d.pool.Cancel(func(part) bool { return true }) {
		d.pooled--
		if !p.op.waiting(p.lo) {
			continue
		}
		if n := p.op.cancelUntakenLocked(contract.Cancelled); n > 0 {
			hit, rows = append(hit, p.op), rows+n
		}
	}
	return hit, rows
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
