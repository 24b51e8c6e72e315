package drivekit

import (
	"fmt"
	"unsafe"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/rowbatch"
)

// rowKeys builds the store key of every row of b with the batch's key
// maker, all of them into one buffer sized for the batch, and returns
// them in row order as strings over that buffer. The buffer is written
// only here, so the strings are immutable; the operation keeps them
// (and through them the buffer) until it is dropped, and the store
// clones a key it keeps for a new entry, so no stored object pins the
// buffer. The rows' names are not kept.
//
// b has passed [rowbatch.Check], so every name has a key. A key maker
// whose AppendKey does not append exactly KeyLen bytes breaks its
// contract: rowKeys refuses the batch with an error wrapping
// [rowbatch.ErrBadBatch] that names the row.
func rowKeys(b contract.RowBatch) ([]string, error) {
	total := 0
	for _, r := range b.Rows {
		total += b.Keys.KeyLen(len(r.Name))
	}
	buf := make([]byte, 0, total)
	for i, r := range b.Rows {
		start := len(buf)
		buf = b.AppendKey(buf, i)
		if got, want := len(buf)-start, b.Keys.KeyLen(len(r.Name)); got != want {
			return nil, fmt.Errorf("%w: row %d: the key maker (%T) made a key of %d bytes for a name of %d bytes, its KeyLen says %d",
				rowbatch.ErrBadBatch, i, b.Keys, got, len(r.Name), want)
		}
	}
	// Every key had exactly the length KeyLen promised, so buf never
	// grew: it is the one buffer made above, and nothing writes it again.
	all := unsafe.String(unsafe.SliceData(buf), len(buf))
	keys := make([]string, len(b.Rows))
	off := 0
	for i, r := range b.Rows {
		n := b.Keys.KeyLen(len(r.Name))
		keys[i] = all[off : off+n]
		off += n
	}
	return keys, nil
}
