package mooncakedrv

import (
	"fmt"
	"hash/maphash"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/scheduler"
)

// Put starts writing the batch's rows to the store and returns at once.
// It fails with an error wrapping [contract.ErrDriverRejected], recording
// and starting nothing, when the driver is draining or closed, the batch
// has no rows or no key maker, a name repeats or has no key, a key would
// hold a NUL byte, a row has more than one span, or a span lies outside
// every live registration.
//
// onChange (nil means none) is called after each part's rows end, on the
// driver's worker (or, for rows Cancel ends, a goroutine of the driver),
// never under the driver's lock, and before that goroutine counts itself
// finished, so Drain never returns before the last callback.
func (d *Driver) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	return d.admit(contract.PutDir, b, nil, onChange)
}

// Get starts reading the batch's rows from the store into their spans and
// returns at once. It fails as Put does, and for any non-nil hint (the
// driver declares no Hints).
func (d *Driver) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	return d.admit(contract.GetDir, b, h, onChange)
}

func (d *Driver) admit(dir contract.Direction, b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	if h != nil {
		return nil, fmt.Errorf("%w: mooncakedrv: get: a hint (%T); the driver declares no Hints", contract.ErrDriverRejected, h)
	}
	d.mu.Lock()
	err := d.checkLocked(dir, b)
	gen := d.regions.Gen()
	d.mu.Unlock()
	if err != nil {
		return nil, err
	}

	// Keys are built outside the lock, straight into each part's packed
	// key list: the check above proved every name has one.
	op := &operation{d: d, dir: dir, batch: b, onChange: onChange,
		rows: make([]contract.RowStatus, len(b.Rows)), pending: len(b.Rows)}
	parts, err := d.cut(op)
	if err != nil {
		return nil, fmt.Errorf("%w: mooncakedrv: %v: %w", contract.ErrDriverRejected, dir, err)
	}

	d.mu.Lock()
	defer d.mu.Unlock()
	// A Drain, or a change of the live regions, may have come meanwhile.
	err = d.usableLocked(dir.String())
	if err == nil && d.regions.Gen() != gen {
		err = d.checkLocked(dir, b)
	}
	if err != nil {
		for _, p := range parts {
			d.releasePart(p)
		}
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
			d.log.Error("mooncakedrv: a part could not be queued; its rows end Cancelled", "err", err)
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
		return fmt.Errorf("%w: mooncakedrv: %v: %w", contract.ErrDriverRejected, dir, err)
	}
	return nil
}

// cut splits op's batch into parts of at most RowsPerCall rows and
// BytesPerCall bytes (a row larger than that goes alone), building each
// part's keys and call arguments. A key that cannot cross to C (a NUL
// byte in it) fails the whole cut; the parts are released.
func (d *Driver) cut(op *operation) ([]*part, error) {
	rows := op.batch.Rows
	var parts []*part
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
		p := d.newPart(op, lo, hi)
		parts = append(parts, p)
		for j := range p.len() {
			s := rows[lo+j].Spans[0]
			if err := p.keys.Add(op.batch.AppendKey(p.keys.Tail(), lo+j)); err != nil {
				for _, p := range parts {
					d.releasePart(p)
				}
				return nil, fmt.Errorf("row %d: %w", lo+j, err)
			}
			p.bufs[j], p.sizes[j] = s.Addr, uint64(s.Len)
		}
		lo = hi
	}
	return parts, nil
}

// markWritingLocked marks every put row's key as being written by this
// driver, or, when a put of this driver is writing it already, flags the
// row to end NotReady without an SDK call (Mooncake would answer the
// second put 0 and store nothing).
func (d *Driver) markWritingLocked(op *operation, parts []*part) {
	op.flags = make([]rowFlag, len(op.rows))
	for _, p := range parts {
		for j := range p.len() {
			h := maphash.Bytes(d.seed, p.keys.Key(j))
			p.hashes[j] = h
			if _, busy := d.writing[h]; busy {
				op.flags[p.lo+j] |= rowWriting
				continue
			}
			d.writing[h] = struct{}{}
			op.flags[p.lo+j] |= rowMarked
		}
	}
}

// unmarkLocked ends part row j's mark in the writing set.
func (d *Driver) unmarkLocked(p *part, j int) {
	if p.op.flags != nil && p.op.flags[p.lo+j]&rowMarked != 0 {
		delete(d.writing, p.hashes[j])
		p.op.flags[p.lo+j] &^= rowMarked
	}
}
