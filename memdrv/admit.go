package memdrv

import (
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// Put starts writing the batch's rows to the store and returns at once.
// It fails with an error wrapping [contract.ErrDriverRejected], recording
// and starting nothing, when the driver does not serve puts, is draining
// or closed, the batch has more rows than MaxRowsPerOp, or
// [rowbatch.Check] refuses the batch against the live registrations (the
// error then wraps [rowbatch.ErrBadBatch] too and names the row). The
// error also wraps ErrBadBatch when the batch's key maker breaks its
// contract by making a key of another length than its KeyLen says.
//
// Each row is stored under the key the batch's key maker builds from
// its name ([contract.RowBatch.AppendKey]); the keys are built once, at
// admission, and the names are not kept.
//
// onChange (nil means none) is called on a driver goroutine after each
// change of the operation's rows or access, never under the driver's
// lock, and possibly from several goroutines at once.
func (d *Driver) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	return d.admit(PutDir, b, nil, onChange)
}

// Get starts reading the batch's rows from the store into their spans and
// returns at once. It fails as Put does, and also when h is non-nil and
// the driver does not declare Hints. memdrv ignores the hint's value.
func (d *Driver) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	return d.admit(GetDir, b, h, onChange)
}

func (d *Driver) admit(dir Direction, b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usableLocked(dir.String()); err != nil {
		return nil, err
	}
	switch {
	case dir == PutDir && !d.caps.Put, dir == GetDir && !d.caps.Get:
		return nil, fmt.Errorf("%w: memdrv: %s: the driver does not serve %ss", contract.ErrDriverRejected, dir, dir)
	case h != nil && !d.caps.Hints:
		return nil, fmt.Errorf("%w: memdrv: get: a hint (%T) and the driver does not declare Hints", contract.ErrDriverRejected, h)
	case d.caps.MaxRowsPerOp > 0 && b.Len() > d.caps.MaxRowsPerOp:
		return nil, fmt.Errorf("%w: memdrv: %s: %d rows, the driver takes at most %d per call",
			contract.ErrDriverRejected, dir, b.Len(), d.caps.MaxRowsPerOp)
	}
	if err := d.check.Check(b, d.live, d.caps.MultiSpan); err != nil {
		return nil, fmt.Errorf("%w: memdrv: %s: %w", contract.ErrDriverRejected, dir, err)
	}
	keys, err := rowKeys(b)
	if err != nil {
		return nil, fmt.Errorf("%w: memdrv: %s: %w", contract.ErrDriverRejected, dir, err)
	}
	op := newOperation(d, dir, b, keys, onChange)
	d.open[op] = struct{}{}
	for i := range b.Rows {
		d.queue = append(d.queue, task{op: op, row: i})
		if dir == PutDir {
			d.queuedPuts[keys[i]]++
		}
	}
	d.scene.admitted[dir]++
	if h != nil {
		d.scene.hints++
		d.scene.lastHint = h
	}
	d.spawnLocked()
	return op, nil
}
