package drivekit

import (
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// Put starts writing the batch's rows to the store and returns at once.
// It fails with an error wrapping [contract.ErrDriverRejected], recording
// and starting nothing, when the driver does not serve puts, is
// draining, recycling or closed, the batch has more rows than
// MaxRowsPerOp, or [rowbatch.Check] refuses the batch against the live
// registrations (the error then wraps [rowbatch.ErrBadBatch] too and
// names the row). The error also wraps ErrBadBatch when the batch's key
// maker makes a key of another length than its KeyLen says.
//
// Each row is stored under the key the batch's key maker builds from
// its name; the keys are built once, at admission, and the names are
// not kept. The batch is cut into store calls of at most
// [Options.CallRows] rows and [Options.CallBytes] bytes, queued in
// order. A store with a [KeyChecker] refuses keys it cannot hold.
//
// onChange (nil means none) is called on a driver goroutine after each
// change of the operation's rows or access, never under the driver's
// lock, and possibly from several goroutines at once.
func (d *Driver) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	return d.admit(contract.PutDir, b, nil, onChange)
}

// Get starts reading the batch's rows from the store into their spans and
// returns at once. It fails as Put does, and also when h is non-nil and
// the driver does not declare Hints.
func (d *Driver) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	return d.admit(contract.GetDir, b, h, onChange)
}

func (d *Driver) admit(dir contract.Direction, b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	d.mu.Lock()
	err := d.checkLocked(dir, b, h)
	gen := d.gen
	var rk *rowKeys
	if err == nil {
		rk = d.takeKeysLocked()
	}
	d.mu.Unlock()
	if err != nil {
		return nil, err
	}
	// The keys are built outside the lock: the key maker is the
	// caller's code, which may take its time or call the driver.
	err = rk.build(b, !d.reuseKeys)
	if err == nil && d.keyChk != nil {
		err = d.checkKeys(rk.keys)
	}
	if err != nil {
		d.mu.Lock()
		d.keepKeysLocked(rk) // the store saw the keys only in CheckKey
		d.mu.Unlock()
		return nil, fmt.Errorf("%w: %s: %s: %w", contract.ErrDriverRejected, d.name, dir, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	// A Drain, or a change of the live regions, may have come meanwhile.
	if err := d.usableLocked(dir.String()); err != nil {
		d.keepKeysLocked(rk)
		return nil, err
	}
	if d.gen != gen {
		if err := d.checkLocked(dir, b, h); err != nil {
			d.keepKeysLocked(rk)
			return nil, err
		}
	}
	op := newOperation(d, dir, b, rk, h, onChange)
	d.open[op] = struct{}{}
	for lo := 0; lo < len(b.Rows); {
		p := d.cut(op, lo)
		d.queueLocked(p)
		lo = p.hi
	}
	if dir == contract.PutDir {
		for i, k := range op.keys {
			op.ents[i] = d.puts.queue(k)
		}
		d.stats.PutOps++
	} else {
		d.stats.GetOps++
	}
	if h != nil {
		d.stats.Hints++
		d.lastHint = h
	}
	d.spawnLocked()
	return op, nil
}

// cut returns the store call of op that starts at row lo: at most
// CallRows rows and, when set, CallBytes bytes (a larger row alone).
func (d *Driver) cut(op *operation, lo int) part {
	rows := op.batch.Rows
	hi, bytes := lo, int64(0)
	for hi < len(rows) && hi-lo < d.rows {
		n := rowBytes(rows[hi])
		if hi > lo && d.bytes > 0 && bytes+n > d.bytes {
			break
		}
		bytes += n
		hi++
	}
	return part{op: op, lo: lo, hi: hi, bytes: bytes}
}

// rowBytes is the bytes of a row's spans.
func rowBytes(r contract.Row) int64 {
	var n int64
	for _, s := range r.Spans {
		n += s.Len
	}
	return n
}

// checkKeys asks the store's KeyChecker about every row's key.
func (d *Driver) checkKeys(keys []string) error {
	for i, k := range keys {
		if err := d.keyChk.CheckKey(k); err != nil {
			return fmt.Errorf("row %d: %w", i, err)
		}
	}
	return nil
}

// checkLocked is admission's check of the driver's state, what it
// declares, and the batch against the live registrations.
func (d *Driver) checkLocked(dir contract.Direction, b contract.RowBatch, h contract.Hint) error {
	if err := d.usableLocked(dir.String()); err != nil {
		return err
	}
	switch {
	case dir == contract.PutDir && !d.caps.Put, dir == contract.GetDir && !d.caps.Get:
		return d.refusal(dir.String(), "the driver does not serve %ss", dir)
	case h != nil && !d.caps.Hints:
		return d.refusal("get", "a hint (%T) and the driver does not declare Hints", h)
	case d.caps.MaxRowsPerOp > 0 && b.Len() > d.caps.MaxRowsPerOp:
		return d.refusal(dir.String(), "%d rows, the driver takes at most %d per call", b.Len(), d.caps.MaxRowsPerOp)
	}
	if err := d.check.Check(b, d.live, d.caps.MultiSpan); err != nil {
		return fmt.Errorf("%w: %s: %s: %w", contract.ErrDriverRejected, d.name, dir, err)
	}
	return nil
}
