package roundtrip

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/mooncakedrv/pool/pooltest"
	"github.com/kvshare/kvshare/tools/internal/realpool"
)

// The main job on a real pool: 256 rows of 64 KiB through two clients
// that mount nothing (every byte crosses TCP to the provider),
// byte-identical, nothing lent after. Twice with the same seed: the
// second run stores its own objects under its own prefix.
func TestRealPoolRoundTrip(t *testing.T) {
	dir := pooltest.Dir(t)
	p := pooltest.Start(t, pool.ForTests(dir))
	m, err := MooncakeStore(realpool.StoreConfig(t, dir, p), nil)
	require.NoError(t, err)

	var prefixes []string
	for run := range 2 {
		c := Defaults()
		m.Configure(&c)
		c.Rows, c.RowBytes, c.ViewRows = 256, 64<<10, 32
		rep, err := Run(t.Context(), c, nil)
		require.NoError(t, err, "run %d", run)
		t.Logf("run %d under %s: publish %.2f GB/s, fetch %.2f GB/s", run, rep.KeyPrefix, rep.Publish.GBps(), rep.Fetch.GBps())
		assert.True(t, rep.OK(), "run %d: %+v", run, rep)
		assert.Equal(t, int64(256), rep.Publish.Rows[contract.Ready])
		assert.Equal(t, int64(256), rep.Fetch.Rows[contract.Ready])
		assert.Zero(t, rep.Mismatches)
		assert.Zero(t, rep.RowsLent)
		assert.Zero(t, rep.BytesLent)
		assert.True(t, rep.Freed)
		assert.Contains(t, rep.Store, p.MasterAddress())
		assert.Regexp(t, `^kvshare-test/roundtrip/`, rep.KeyPrefix)
		prefixes = append(prefixes, rep.KeyPrefix)
	}
	assert.NotEqual(t, prefixes[0], prefixes[1])
}

// The raw floor beside the job on a real pool: the pool warmed first,
// both floor rounds moving every row each way, the job intact, and the
// ratios reported.
func TestRealPoolFloor(t *testing.T) {
	dir := pooltest.Dir(t)
	p := pooltest.Start(t, pool.ForTests(dir))
	m, err := MooncakeStore(realpool.StoreConfig(t, dir, p), nil)
	require.NoError(t, err)
	m.WarmFirst(16 << 20)

	c := Defaults()
	m.Configure(&c)
	c.Rows, c.RowBytes, c.ViewRows, c.Floor = 128, 64<<10, 32, true
	rep, err := Run(t.Context(), c, nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%+v", rep)
	assert.Equal(t, int64(16<<20), rep.Warmed, "two rounds of 8 MiB")
	require.NotNil(t, rep.Floor)
	for _, r := range []FloorRound{rep.Floor.Before, rep.Floor.After} {
		assert.Equal(t, 128, r.Publish.Delivered)
		assert.Equal(t, 128, r.Fetch.Delivered)
	}
	pub, fetch := rep.Ratios()
	t.Logf("publish/floor %.2f, fetch/floor %.2f", pub, fetch)
	assert.Positive(t, pub)
	assert.Positive(t, fetch)
}
