package mooncakedrv

import (
	"bytes"
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// 2000 distinct rows of 64 KiB round trip through binding.Backend over
// the driver's 4 workers (parts of 256 rows): one lender publishes them,
// another fetches them into its slots in reverse order, and every byte
// is compared. Every row is Ready both ways, every call's access Ended.
func TestRealRoundTrip(t *testing.T) {
	s := startRealStore(t, nil)
	const rows, slotBytes, prefix = 2000, 64 << 10, "kvshare-realpool/roundtrip"
	src := newRealLender(t, s, rows, slotBytes, prefix, false)
	dst := newRealLender(t, s, rows, slotBytes, prefix, false)
	require.Equal(t, 4, src.drv.cfg.Workers)
	_, err := rand.Read(src.mem.bytes) // every row distinct
	require.NoError(t, err)

	a, err := src.be.Publish(view(0, span(0, rows)...), nil)
	require.NoError(t, err)
	src.quiesced(a)
	o := src.outcome(a)
	require.NoError(t, o.Fault)
	require.Equal(t, rows, o.Prefix(), "rows published")

	reversed := make([]int, rows)
	for i := range reversed {
		reversed[i] = rows - 1 - i
	}
	a, err = dst.be.Fetch(view(0, reversed...), nil)
	require.NoError(t, err)
	dst.quiesced(a)
	o = dst.outcome(a)
	require.NoError(t, o.Fault)
	require.Equal(t, rows, o.Prefix(), "rows fetched")
	differ := 0
	for i := range rows {
		if !bytes.Equal(src.mem.slot(i), dst.mem.slot(rows-1-i)) {
			differ++
		}
	}
	assert.Zero(t, differ, "rows whose bytes came back different")

	for _, l := range []*realLender{src, dst} {
		bs, ds := l.be.Stats(), l.drv.Stats()
		assert.EqualValues(t, rows, bs.Rows[contract.Ready])
		assert.Zero(t, bs.RowsLent)
		assert.Zero(t, ds.RowsUnprovable)
		t.Logf("driver: %d parts, %d SDK calls", ds.Parts, ds.Calls)
	}
}
