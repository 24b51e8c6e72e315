package bench

import (
	"bytes"
	"encoding/json"
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
	assert.Equal(t, o.Pool.RoundtripViewRows, rep.RoundtripViewRows)
	assert.Equal(t, 2, rep.RoundtripGoroutines, "as many as the driver has workers")
	assert.Equal(t, 256, rep.LargeCallRows)
	assert.Equal(t, 1, rep.LargeCallGoroutines, "a raw loop: one goroutine")
	require.Len(t, rep.Cases, 2)
	for _, c := range rep.Cases {
		assert.Zero(t, c.KvshareNotReady, "every row Ready")
		assert.Zero(t, c.RawNotReady)
		assert.Zero(t, c.RoundtripNotReady)
		assert.Zero(t, c.LargeNotReady)
		assert.Equal(t, o.Reps, c.PutRatio.N)
		assert.Equal(t, o.Reps, c.RoundtripPutRatio.N)
		assert.Equal(t, o.Reps, c.RoundtripGetRatio.N)
		assert.Positive(t, c.RawGetGBs.Median)
		assert.Positive(t, c.KvsharePutGBs.Median)
		assert.Positive(t, c.RoundtripGetGBs.Median)
		assert.Positive(t, c.LargePutGBs.Median)
		assert.Equal(t, 256, c.LargeCallRows)
		assert.Equal(t, 1, c.LargeCalls, "16 or 4 rows: one call each way")
	}
	assert.Zero(t, store.Used(), "every object removed after its round")
	assert.Positive(t, store.Calls().Remove)

	r := &Report{Pool: rep}
	r.judge()
	assert.Len(t, r.Goals, 8, "put and get at each size, against each floor")
	assert.Equal(t, "4 KiB rows: roundtrip-shaped put GB/s / large calls' (256 rows a call)", r.Goals[2].Name)
	assert.InDelta(t, 0.9, r.Goals[2].Target, 1e-9)
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
	assert.Equal(t, 16, c.RoundtripNotReady)
	assert.Equal(t, 16, c.LargeNotReady)
}

// The large-call floor makes one call each way per 256 rows (a put call
// and its exists-check), fewer rows where bytes_per_call caps a call;
// the roundtrip-shaped case at most one per view of 64 rows (views
// queued behind busy workers share a call), never fewer than the
// large-call floor.
func TestRealPoolLargeCallsAndRoundtripShapedViews(t *testing.T) {
	for _, tc := range []struct {
		name         string
		bytesPerCall int64
		perCall      int
	}{
		{"256 rows a call", 0, 256},
		{"capped by bytes_per_call", 100 * 64, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := fakesdk.New(fakesdk.Options{Capacity: 1 << 20})
			target := &poolTarget{client: store.Client(), config: mooncakesdk.StoreConfig{
				Mooncake: mooncakesdk.MooncakeConfig{Workers: 2, BytesPerCall: tc.bytesPerCall},
			}}
			o := tiny()
			const rows = 600
			o.Pool.RowSizes, o.Pool.Bytes, o.Pool.ViewRows, o.Pool.RoundtripViewRows = []int64{64}, rows*64, 64, 64
			r, err := newPoolRig(o, target)
			require.NoError(t, err)
			defer func() { require.NoError(t, r.close()) }()
			calls := (rows + tc.perCall - 1) / tc.perCall
			assert.Equal(t, tc.perCall, r.largeCallRows(64))

			before := store.Calls()
			pr, err := r.largeCallRound(0, 64, r.names('l', 0, rows))
			require.NoError(t, err)
			after := store.Calls()
			assert.Equal(t, rows, pr.putReady)
			assert.Equal(t, rows, pr.getReady)
			assert.Equal(t, calls, after.Put-before.Put, "one put a call")
			assert.Equal(t, calls, after.Exist-before.Exist, "each put with its exists-check")
			assert.Equal(t, calls, after.Get-before.Get)

			before = store.Calls()
			pr, err = r.roundtripRound(0, r.names('t', 0, rows))
			require.NoError(t, err)
			after = store.Calls()
			assert.Equal(t, 2*rows, pr.putReady+pr.getReady)
			views := (rows + 63) / 64
			assert.LessOrEqual(t, after.Get-before.Get, views, "at most one call a view of 64 rows")
			assert.GreaterOrEqual(t, after.Get-before.Get, calls, "no call past the caps")
			assert.Zero(t, store.Used(), "every object removed after its round")
		})
	}
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
		assert.Zero(t, c.RoundtripNotReady)
		assert.Zero(t, c.LargeNotReady)
		assert.Positive(t, c.RawPutGBs.Median)
		assert.Positive(t, c.LargeGetGBs.Median)
		assert.Equal(t, o.Reps, c.RoundtripPutRatio.N)
	}
	assert.Len(t, rep.Goals, 8)
}

// Measurement 8 over a loopback pool (the real-pool tier): the node's
// engine lends memfd memory that the pool's client registers, and both
// paths move every row of each size each way.
func TestNodeOverALoopbackPool(t *testing.T) {
	dir := pooltest.Dir(t)
	o := tiny()
	o.Only = []Measurement{Node}
	o.Pool.MooncakeDir = dir
	o.Pool.Segment = 64 << 20
	rep, err := Run(t.Context(), o, nil, nil)
	require.NoError(t, err)
	p := rep.Node.Pool
	require.NotNil(t, p, "the node measured over the pool")
	assert.Contains(t, p.Pool, "a loopback pool started from "+dir)
	require.Len(t, p.Cases, 2)
	for _, c := range p.Cases {
		assert.Zero(t, c.InProcessNotReady)
		assert.Zero(t, c.NodeNotReady)
		assert.Positive(t, c.NodePutGBs.Median)
		assert.Positive(t, c.NodeGetGBs.Median)
		assert.Equal(t, o.Reps, c.GetRatio.N)
	}
	assert.Len(t, rep.Goals, 5+4)
}

// The table prints the store-shaped comparison under today's, the JSON
// report holds its fields (and leaves them out of a report without
// them), and the goals judge the roundtrip-shaped ratios against 0.9.
func TestRealPoolReportsTheStoreShapedCase(t *testing.T) {
	one := func(v float64) spread { return spread{Median: v, Min: v, Max: v, N: 1} }
	p := &poolReport{
		Pool: "a fake pool", KeyPrefix: "p", BytesPerRound: 1 << 20, Workers: 4, RowsPerCall: 256, BytesPerCall: 128 << 20, WarmBytes: 1 << 20,
		RoundtripViewRows: 64, RoundtripGoroutines: 4, LargeCallRows: 256, LargeCallGoroutines: 1,
		Cases: []poolCase{{
			RowBytes: 64 << 10, Rows: 16, KvsharePutGBs: one(1), KvshareGetGBs: one(1), RawPutGBs: one(1), RawGetGBs: one(1),
			PutRatio: one(1), GetRatio: one(1), RoundtripPutGBs: one(0.95), RoundtripGetGBs: one(0.5), LargePutGBs: one(1), LargeGetGBs: one(1),
			RoundtripPutRatio: one(0.95), RoundtripGetRatio: one(0.5), LargeCallRows: 256, LargeCalls: 1, RoundtripNotReady: 3,
		}},
	}
	r := &Report{Pool: p}
	r.judge()
	var out bytes.Buffer
	WriteTable(&out, r)
	for _, want := range []string{
		"   Shaped for the store: kvshare as `kvshare roundtrip` submits (views of 64 rows from 4 goroutines at once) against the large-call floor:\n",
		"the same rows in one call per 256 rows (fewer where 128 MiB a call caps), each put with its exists-check, on 1 goroutine.\n",
		"roundtrip-shaped put", "large-call put", "not Ready roundtrip/large",
		"0.950 [0.950–0.950]", "3/0",
	} {
		assert.Contains(t, out.String(), want)
	}
	require.Len(t, r.Goals, 4)
	assert.Equal(t, "64 KiB rows: roundtrip-shaped put GB/s / large calls' (256 rows a call)", r.Goals[2].Name)
	assert.True(t, r.Goals[2].Met, "0.95 ≥ 0.9")
	assert.Equal(t, "64 KiB rows: roundtrip-shaped get GB/s / large calls' (256 rows a call)", r.Goals[3].Name)
	assert.False(t, r.Goals[3].Met, "0.5 < 0.9: reported, not asserted")

	b, err := json.Marshal(p)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	for _, k := range []string{"roundtrip_view_rows", "roundtrip_goroutines", "large_call_rows", "large_call_goroutines"} {
		assert.Contains(t, doc, k)
	}
	c := doc["cases"].([]any)[0].(map[string]any)
	for _, k := range []string{"roundtrip_put_gbs", "roundtrip_get_gbs", "large_call_put_gbs", "large_call_get_gbs",
		"roundtrip_put_ratio", "roundtrip_get_ratio", "large_call_rows", "large_calls", "roundtrip_not_ready", "put_ratio", "raw_not_ready"} {
		assert.Contains(t, c, k)
	}
	var back poolReport
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, *p, back, "the report survives a round trip")

	b, err = json.Marshal(poolCase{RowBytes: 4096})
	require.NoError(t, err)
	assert.NotContains(t, string(b), "roundtrip", "a case without the store-shaped figures leaves them out")
	assert.NotContains(t, string(b), "large_call")
}
