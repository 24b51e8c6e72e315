package redisdrv

import (
	"fmt"
	"hash/maphash"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/scheduler"
)

// Put starts writing the batch's rows to the server and returns at once.
// It fails with an error wrapping [contract.ErrDriverRejected], recording
// and starting nothing, when the driver is draining or closed, the batch
// has no rows or no key maker, a name repeats or has no key, a row has
// more than one span, or a span lies outside every live registration.
//
// onChange (nil means none) is called after each part's rows end (on a
// cluster, also after each node's rows of a part end), on the driver's
// worker or a goroutine it waits for (or, for rows Cancel ends, a
// goroutine of the driver), never under the driver's lock, and before
// the worker counts itself finished, so Drain never returns before the
// last callback.
func (d *Driver) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	return d.admit(contract.PutDir, b, nil, onChange)
}

// Get starts reading the batch's rows from the server into their spans
// and returns at once. It fails as Put does, and for any non-nil hint
// (the driver declares no Hints).
func (d *Driver) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	return d.admit(contract.GetDir, b, h, onChange)
}

func (d *Driver) admit(dir contract.Direction, b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	if h != nil {
		return nil, fmt.Errorf("%w: redisdrv: get: a hint (%T); the driver declares no Hints", contract.ErrDriverRejected, h)
	}
	d.mu.Lock()
	err := d.checkLocked(dir, b)
	gen := d.regions.Gen()
	d.mu.Unlock()
	if err != nil {
		return nil, err
	}

	// Keys are built outside the lock: the check above proved every name
	// has one.
	op := &operation{d: d, dir: dir, batch: b, onChange: onChange,
		rows: make([]contract.RowStatus, len(b.Rows)), pending: len(b.Rows)}
	parts := d.cut(op)

	d.mu.Lock()
	defer d.mu.Unlock()
	// A Drain, or a change of the live regions, may have come meanwhile.
	err = d.usableLocked(dir.String())
	if err == nil && d.regions.Gen() != gen {
		err = d.checkLocked(dir, b)
	}
	if err != nil {
		return nil, err
	}
	if dir == contract.PutDir {
		d.markWritingLocked(op, parts)
	}
	d.open[op] = struct{}{}
	op.parts = len(parts)
	kind := scheduler.Get
	if dir == contract.PutDir {
		kind = scheduler.Put
	}
	for _, p := range parts {
		if err := d.pool.Submit(kind, p); err != nil {
			// Not reachable while the lock is held (Drain stops the pool
			// only after it marked the driver draining under the lock);
			// should it happen, the part never ran and touched nothing.
			d.log.Error("redisdrv: a part could not be queued; its rows end Cancelled", "err", err)
			d.cancelPartLocked(p)
			d.notifyLocked(op)
		}
	}
	d.stats.Ops++
	return op, nil
}

// checkLocked is admission's check of the driver's state and the batch.
func (d *Driver) checkLocked(dir contract.Direction, b contract.RowBatch) error {
	if err := d.usableLocked(dir.String()); err != nil {
		return err
	}
	if err := d.checker.Check(b, d.regions.Live(), false); err != nil {
		return fmt.Errorf("%w: redisdrv: %v: %w", contract.ErrDriverRejected, dir, err)
	}
	return nil
}

// cut splits op's batch into parts of at most RowsPerCall rows and
// BytesPerCall bytes (a row larger than that goes alone), building each
// row's key.
func (d *Driver) cut(op *operation) []*part {
	rows := op.batch.Rows
	var parts []*part
	var buf []byte
	for lo := 0; lo < len(rows); {
		hi, bytes := lo, int64(0)
		for hi < len(rows) && hi-lo < d.cfg.RowsPerCall {
			n := rows[hi].Spans[0].Len
			if hi > lo && bytes+n > d.cfg.BytesPerCall {
				break
			}
			bytes += n
			hi++
		}
		p := &part{op: op, lo: lo, hi: hi, bytes: bytes, keys: make([]string, hi-lo),
			status: make([]contract.RowStatus, hi-lo)}
		for j := range p.keys {
			buf = op.batch.AppendKey(buf[:0], lo+j)
			p.keys[j] = string(buf)
		}
		parts = append(parts, p)
		lo = hi
	}
	return parts
}

// markWritingLocked marks every put row's key as being written by this
// driver, or, when a put of this driver is writing it already, flags the
// row to end NotReady without a network call (the second SET NX would
// find the first one's value, or none yet).
func (d *Driver) markWritingLocked(op *operation, parts []*part) {
	op.writing = make([]bool, len(op.rows))
	for _, p := range parts {
		p.hashes = make([]uint64, p.len())
		p.marked = make([]bool, p.len())
		for j, k := range p.keys {
			h := maphash.String(d.seed, k)
			p.hashes[j] = h
			if _, busy := d.writing[h]; busy {
				op.writing[p.lo+j] = true
				continue
			}
			d.writing[h] = struct{}{}
			p.marked[j] = true
		}
	}
}

// unmarkLocked ends part row j's mark in the writing set.
func (d *Driver) unmarkLocked(p *part, j int) {
	if p.marked != nil && p.marked[j] {
		delete(d.writing, p.hashes[j])
		p.marked[j] = false
	}
}
