package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/mooncakedrv/pool/pooltest"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

// Measurement 5 over a fake pool: the same code as on a real one, the
// target a fakesdk client.
func TestRealPoolMeasurementOverAFakePool(t *testing.T) {
	store := fakesdk.New(fakesdk.Options{Capacity: 1 << 20})
	stopped := false
	target := &poolTarget{
		client:   store.Client(),
		config:   mooncakesdk.StoreConfig{Blob: mooncakesdk.BlobConfig{KeyPrefix: "test"}, Mooncake: mooncakesdk.MooncakeConfig{Workers: 2}},
		describe: "a fake pool",
		warm:     4 << 20, // more than fits: the warm-up stops at "pool full"
		stop:     func() error { stopped = true; return nil },
	}
	o := tiny()
	var steps []string
	rep, err := measureRealPool(t.Context(), o, target, func(s string) { steps = append(steps, s) })
	require.NoError(t, err)
	assert.True(t, stopped, "the target is closed")
	assert.Len(t, steps, 1+o.Reps*len(o.Pool.RowSizes))
	assert.Equal(t, "a fake pool", rep.Pool)
	assert.Regexp(t, `^test/bench/\d{8}t\d{6}z-[0-9a-f]{8}$`, rep.KeyPrefix)
	assert.Equal(t, int64(1<<20), rep.WarmBytes, "warmed until the pool was full")
	assert.Equal(t, 2, rep.Workers)
	assert.Equal(t, mooncakesdk.DefaultRowsPerCall, rep.RowsPerCall)
	require.Len(t, rep.Cases, 2)
	for _, c := range rep.Cases {
		assert.Zero(t, c.KvshareNotReady, "every row Ready")
		assert.Zero(t, c.RawNotReady)
		assert.Equal(t, o.Reps, c.PutRatio.N)
		assert.Positive(t, c.RawGetGBs.Median)
		assert.Positive(t, c.KvsharePutGBs.Median)
	}
	assert.Zero(t, store.Used(), "every object removed after its round")
	assert.Positive(t, store.Calls().Remove)

	r := &Report{Pool: rep}
	r.judge()
	assert.Len(t, r.Goals, 4, "put and get at each size")
}

// A full pool answers at once: rows that did not come back Ready are
// counted apart and move no bytes.
func TestRealPoolCountsOnlyReadyRows(t *testing.T) {
	store := fakesdk.New(fakesdk.Options{Capacity: 32 << 10})
	target := &poolTarget{client: store.Client(), config: mooncakesdk.StoreConfig{Mooncake: mooncakesdk.MooncakeConfig{Workers: 2}}}
	o := tiny()
	o.Reps = 1
	o.Pool.RowSizes = []int64{4096}
	rep, err := measureRealPool(t.Context(), o, target, noSteps)
	require.NoError(t, err)
	c := rep.Cases[0]
	// 16 rows a side and way; 8 fit.
	assert.Equal(t, 16, c.KvshareNotReady, "8 puts declined, 8 gets missed")
	assert.Equal(t, 16, c.RawNotReady)
}

func TestRealPoolAgainstALoopbackPool(t *testing.T) {
	dir := pooltest.Dir(t)
	o := tiny()
	o.Only = []Measurement{RealPool}
	o.Pool.MooncakeDir = dir
	o.Pool.Segment = 64 << 20
	rep, err := Run(t.Context(), o, nil, nil)
	require.NoError(t, err)
	p := rep.Pool
	require.NotNil(t, p)
	assert.Empty(t, p.Skipped)
	assert.Contains(t, p.Pool, "a loopback pool started from "+dir)
	assert.Equal(t, int64(64<<20), p.WarmBytes)
	require.Len(t, p.Cases, 2)
	for _, c := range p.Cases {
		assert.Zero(t, c.KvshareNotReady)
		assert.Zero(t, c.RawNotReady)
		assert.Positive(t, c.RawPutGBs.Median)
	}
	assert.Len(t, rep.Goals, 4)
}
