package mooncakedrv

import (
	"bytes"
	"fmt"
	"hash/maphash"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/scheduler"
)

// Put starts writing the batch's rows to the store and returns at once.
// It fails with an error wrapping [contract.ErrDriverRejected], recording
// and starting nothing, when the driver is draining or closed, the batch
// has no rows or no key maker, a name repeats or has no key, a key would
// hold a NUL byte, a row has more than one span, or a span lies outside
// every live registration.
//
// The whole batch is checked first; then each part's keys are built and
// the part queued, the first before the next ones are built, so a worker
// may run it before Put returns. A Cancel or Drain that comes while
// later parts are built ends those parts' rows Cancelled without an SDK
// call.
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

	// The whole batch is checked before anything is queued (nothing of a
	// batch refused may reach the store). Keys are built outside the
	// lock, straight into each part's packed key list, one part at a
	// time: the first part is queued as soon as its keys are built, and
	// the next ones follow while a worker already runs it.
	if err := d.keysCross(b); err != nil {
		return nil, fmt.Errorf("%w: mooncakedrv: %v: %w", contract.ErrDriverRejected, dir, err)
	}
	op := &operation{d: d, dir: dir, batch: b, onChange: onChange,
		rows: make([]contract.RowStatus, len(b.Rows)), pending: len(b.Rows)}
	bounds := d.partBounds(b)
	first := d.buildPart(op, bounds[0])

	d.mu.Lock()
	// A Drain, or a change of the live regions, may have come meanwhile.
	err = d.usableLocked(dir.String())
	if err == nil && d.regions.Gen() != gen {
		err = d.checkLocked(dir, b)
	}
	if err != nil {
		d.mu.Unlock()
		d.releasePart(first)
		return nil, err
	}
	if dir == contract.PutDir {
		op.flags = make([]rowFlag, len(op.rows))
	}
	d.open[op] = struct{}{}
	op.parts = len(bounds)
	d.stats.Ops++
	d.queueLocked(op, first)
	if len(bounds) == 1 {
		d.mu.Unlock()
		return op, nil
	}
	d.admitting++ // Drain waits for the rest to be queued, or cancelled
	d.mu.Unlock()
	for _, bd := range bounds[1:] {
		p := d.buildPart(op, bd)
		d.mu.Lock()
		d.queueLocked(op, p)
		d.mu.Unlock()
	}
	d.mu.Lock()
	if d.admitting--; d.admitting == 0 {
		close(d.admitIdle)
		d.admitIdle = make(chan struct{})
	}
	d.mu.Unlock()
	return op, nil
}

// queueLocked marks a put part's keys in the writing set and queues the
// part for a worker, unless the operation was cancelled or the driver
// began draining since its admission: then its rows end Cancelled
// without reaching the store.
func (d *Driver) queueLocked(op *operation, p *part) {
	if op.cancelled || d.draining || d.closed || d.recycling {
		d.cancelPartLocked(p)
		d.notifyLocked(op)
		d.releasePart(p)
		return
	}
	kind := scheduler.Get
	if op.dir == contract.PutDir {
		kind = scheduler.Put
		d.markWritingLocked(op, p)
	}
	if err := d.pool.Submit(kind, p); err != nil {
		// Not reachable while the lock is held (Drain stops the pool only
		// after it marked the driver draining under the lock); should it
		// happen, the part never ran and touched nothing.
		d.log.Error("mooncakedrv: a part could not be queued; its rows end Cancelled", "err", err)
		d.cancelPartLocked(p)
		d.notifyLocked(op)
		d.releasePart(p)
	}
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

// partSpan is one part's rows [lo, hi) of a batch.
type partSpan struct{ lo, hi int }

// partBounds splits a batch into parts of at most RowsPerCall rows and
// BytesPerCall bytes (a row larger than that goes alone).
func (d *Driver) partBounds(b contract.RowBatch) []partSpan {
	rows := b.Rows
	var bounds []partSpan
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
		bounds = append(bounds, partSpan{lo, hi})
		lo = hi
	}
	return bounds
}

// buildPart takes a part for rows bd of op and builds its keys and call
// arguments. keysCross proved every key crosses to C, so none is
// refused; should the key maker answer otherwise now (a key maker whose
// keys change between calls), the part is marked to end every row Fault
// without an SDK call.
func (d *Driver) buildPart(op *operation, bd partSpan) *part {
	rows := op.batch.Rows
	p := d.newPart(op, bd.lo, bd.hi)
	for j := range p.len() {
		s := rows[bd.lo+j].Spans[0]
		if err := p.keys.Add(op.batch.AppendKey(p.keys.Tail(), bd.lo+j)); err != nil && p.refused == nil {
			p.refused = fmt.Errorf("row %d: %w", bd.lo+j, err)
		}
		p.bufs[j], p.sizes[j] = s.Addr, uint64(s.Len)
		p.bytes += s.Len
	}
	return p
}

// keysCross checks that every key of the batch can cross to C (no NUL
// byte; the check proved none is empty). Keys made by a keys.Stem cross
// by construction (a checked prefix, the name in hex), so only other key
// makers pay for a pass that builds each key once into a scratch buffer.
func (d *Driver) keysCross(b contract.RowBatch) error {
	if _, ok := b.Keys.(keys.Stem); ok {
		return nil
	}
	var buf []byte
	for i := range b.Rows {
		buf = b.AppendKey(buf[:0], i)
		if bytes.IndexByte(buf, 0) >= 0 {
			return fmt.Errorf("row %d: %w: key %q holds a NUL byte", i, mooncakesdk.ErrInvalidArgument, buf)
		}
	}
	return nil
}

// markWritingLocked marks every row's key of a put part as being written
// by this driver, or, when a put of this driver is writing it already,
// flags the row to end NotReady without an SDK call (Mooncake would
// answer the second put 0 and store nothing).
func (d *Driver) markWritingLocked(op *operation, p *part) {
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

// unmarkLocked ends part row j's mark in the writing set.
func (d *Driver) unmarkLocked(p *part, j int) {
	if p.op.flags != nil && p.op.flags[p.lo+j]&rowMarked != 0 {
		delete(d.writing, p.hashes[j])
		p.op.flags[p.lo+j] &^= rowMarked
	}
}
