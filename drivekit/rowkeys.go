package drivekit

import (
	"fmt"
	"unsafe"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/rowbatch"
)

// rowKeys is an operation's per-row scratch: the store key of each row,
// as strings over one buffer, each row's state and, for a put, each
// row's entry in the driver's [putKeys]. Kept by the driver for reuse:
// an operation gives it back to its driver once nothing can read it any more (see
// [operation.releaseLocked]).
type rowKeys struct {
	buf    []byte
	keys   []string
	ents   []*putKey  // a put's rows' entries in the driver's putKeys
	states []rowState // the rows' states, while the operation needs them
}

// build fills rk with the store key of every row of b, built with the
// batch's key maker into one buffer sized for the batch, in row order.
// With fresh, the buffer and the strings are new, never pooled memory: a
// store may keep the keys (see [Options.ReuseKeys]). The buffer is
// written only here, so the strings stay as built until rk is given
// back. The rows' names are not kept.
//
// b has passed [rowbatch.Check], so every name has a key. A key maker
// whose AppendKey does not append exactly KeyLen bytes breaks its
// contract: build refuses the batch with an error wrapping
// [rowbatch.ErrBadBatch] that names the row.
func (rk *rowKeys) build(b contract.RowBatch, fresh bool) error {
	total := 0
	for _, r := range b.Rows {
		total += b.Keys.KeyLen(len(r.Name))
	}
	buf := rk.buf[:0]
	if fresh || cap(buf) < total {
		buf = make([]byte, 0, total)
	}
	keys := rk.keys[:0]
	if fresh || cap(keys) < len(b.Rows) {
		keys = make([]string, 0, len(b.Rows))
	}
	for i, r := range b.Rows {
		start := len(buf)
		buf = b.AppendKey(buf, i)
		if got, want := len(buf)-start, b.Keys.KeyLen(len(r.Name)); got != want {
			return fmt.Errorf("%w: row %d: the key maker (%T) made a key of %d bytes for a name of %d bytes, its KeyLen says %d",
				rowbatch.ErrBadBatch, i, b.Keys, got, len(r.Name), want)
		}
		// Every key so far had exactly the length KeyLen promised, so
		// buf never grew: it is the buffer taken above, and nothing
		// writes these bytes again until rk is given back.
		keys = append(keys, unsafe.String(unsafe.SliceData(buf[start:]), len(buf)-start))
	}
	rk.buf = buf
	rk.keys = keys
	return nil
}

// entries returns rk.ents resliced to n rows.
func (rk *rowKeys) entries(n int) []*putKey {
	rk.ents = grow(rk.ents, n)
	return rk.ents
}

// rowStates returns rk.states resliced to n rows, all Pending.
func (rk *rowKeys) rowStates(n int) []rowState {
	rk.states = grow(rk.states, n)
	return rk.states
}

// spareRowKeys bounds the rowKeys a driver keeps for reuse; one of more
// than maxSpareRows rows, or with a key buffer over maxSpareKeyBytes,
// is not kept whole, so that a few outliers pin little memory: at most
// some 20 MB a driver, after four operations of 65536 rows at once.
const (
	spareRowKeys     = 4
	maxSpareRows     = 1 << 16
	maxSpareKeyBytes = 4 << 20
)

// takeKeysLocked returns a rowKeys for an admission: a spare one the
// driver kept, or a new one.
func (d *Driver) takeKeysLocked() *rowKeys { return takeSpare(&d.spare) }

// keepKeysLocked keeps rk for a later admission, once nothing reads it.
// Unless the driver reuses keys, its buffer and strings go with their
// operation (a store may have kept a key); its entries, the kit's alone,
// are kept, and its states when the operation let them go (see
// [operation.releaseLocked]). The driver's own list, under its lock, rather
// than a [sync.Pool]: a pool's item given back on a worker's processor
// is seldom found by the next admission on another.
func (d *Driver) keepKeysLocked(rk *rowKeys) {
	clear(rk.ents)
	if cap(rk.ents) > maxSpareRows || cap(rk.states) > maxSpareRows {
		return
	}
	if !d.reuseKeys || cap(rk.buf) > maxSpareKeyBytes || cap(rk.keys) > maxSpareRows {
		rk.buf, rk.keys = nil, nil
	}
	keepSpare(&d.spare, rk, spareRowKeys)
}
