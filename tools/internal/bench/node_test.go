package bench

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

// Measurement 8 runs both paths over one store in the same run: every
// shape and direction has samples of each side and of the socket floor,
// an added-latency figure per repetition, and the throughput a rate per
// side and repetition; the table prints it and says the real pool is
// not measured.
func TestNodeMeasuresBothPathsAndTheFloor(t *testing.T) {
	o := tiny()
	o.Only = []Measurement{Node}
	rep, err := Run(t.Context(), o, nil, nil)
	require.NoError(t, err)
	n := rep.Node
	require.NotNil(t, n)
	require.Len(t, n.Latency, 4, "2 shapes × publish and fetch")
	for i, c := range n.Latency {
		assert.Equal(t, o.Node.Shapes[i/2], c.Rows)
		assert.Equal(t, []string{"publish", "fetch"}[i%2], c.Direction)
		want := o.Reps * o.Node.Samples
		for name, l := range map[string]latency{"in-process outcome": c.InProcessOutcome, "in-process quiesced": c.InProcessQuiesced,
			"node outcome": c.NodeOutcome, "node quiesced": c.NodeQuiesced, "socket floor": c.Floor} {
			assert.Equal(t, want, l.N, "%d rows %s: %s samples", c.Rows, c.Direction, name)
			assert.Positive(t, l.P50Ms, name)
			assert.LessOrEqual(t, l.P50Ms, l.P99Ms, name)
		}
		assert.GreaterOrEqual(t, c.NodeQuiesced.P50Ms, c.NodeOutcome.P50Ms, "quiescence never comes before the outcome")
		assert.Equal(t, o.Reps, c.OutcomeAdded.N, "one figure per repetition")
		assert.Equal(t, o.Reps, c.QuiescedAdded.N)
	}
	tp := n.Throughput
	assert.Equal(t, int(o.Node.ThroughputBytes/o.Node.ThroughputRowBytes), tp.Rows)
	for _, s := range []spread{tp.InProcess, tp.Node, tp.InProcessPublish, tp.NodeFetch, tp.Ratio} {
		assert.Equal(t, o.Reps, s.N)
		assert.Positive(t, s.Median)
	}
	assert.Len(t, rep.Goals, 5)
	for _, g := range rep.Goals {
		assert.Equal(t, int(Node), g.Measurement)
	}

	var out bytes.Buffer
	WriteTable(&out, rep)
	assert.Contains(t, out.String(), "8. The node beside the in-process path")
	assert.Contains(t, out.String(), "real pool: "+skippedPool)
}

// Measurement 8 over a fake pool: the same code as on a real one. Both
// paths move every row of each size each way in every repetition, each
// round's objects are removed after it, the target is closed, and the
// table and the goals name the pool part.
func TestNodeOverAPoolMeasuresBothPaths(t *testing.T) {
	store := fakesdk.New(fakesdk.Options{Capacity: 1 << 20})
	stopped := false
	open := func() (*poolTarget, error) {
		return &poolTarget{
			client:   store.Client(),
			config:   mooncakesdk.StoreConfig{Blob: mooncakesdk.BlobConfig{KeyPrefix: "test"}, Mooncake: mooncakesdk.MooncakeConfig{Workers: 2}},
			describe: "a fake pool",
			stop:     func() error { stopped = true; return nil },
		}, nil
	}
	o := tiny()
	o.Only = []Measurement{Node}
	var steps []string
	rep, err := measureNode(t.Context(), o, open, func(s string) { steps = append(steps, s) })
	require.NoError(t, err)
	assert.True(t, stopped, "the target is closed")
	assert.Len(t, steps, o.Reps*(len(o.Node.Shapes)+1)+1+o.Reps*len(o.Pool.RowSizes))
	p := rep.Pool
	require.NotNil(t, p)
	assert.Empty(t, rep.PoolSkipped)
	assert.Equal(t, "a fake pool", p.Pool)
	assert.Regexp(t, `^test/bench/\d{8}t\d{6}z-[0-9a-f]{8}$`, p.KeyPrefix)
	assert.Equal(t, 2, p.Workers)
	require.Len(t, p.Cases, len(o.Pool.RowSizes))
	for i, c := range p.Cases {
		assert.Equal(t, o.Pool.RowSizes[i], c.RowBytes)
		assert.Equal(t, int(o.Pool.Bytes/c.RowBytes), c.Rows)
		assert.Zero(t, c.InProcessNotReady, "every row Ready in process")
		assert.Zero(t, c.NodeNotReady, "every row Ready through the node")
		for _, s := range []spread{c.InProcessPutGBs, c.InProcessGetGBs, c.NodePutGBs, c.NodeGetGBs, c.PutRatio, c.GetRatio} {
			assert.Equal(t, o.Reps, s.N)
			assert.Positive(t, s.Median)
		}
	}
	assert.Zero(t, store.Used(), "every object removed after its round")

	r := &Report{Node: rep}
	r.judge()
	assert.Len(t, r.Goals, 5+2*len(o.Pool.RowSizes), "and put and get at each pool size")
	assert.Equal(t, "4 KiB rows over the real pool: put GB/s through the node / in-process", r.Goals[5].Name)
	var out bytes.Buffer
	writeNode(&out, rep)
	assert.Contains(t, out.String(), "over the real pool (a fake pool)")
	assert.NotContains(t, out.String(), skippedPool)
}

// The socket floor answers each frame with an outcome of its rows, and
// the stream ends cleanly.
func TestSocketFloorEchoesAnOutcomeOfTheFrameRows(t *testing.T) {
	f, err := newSocketFloor()
	require.NoError(t, err)
	names := rowNames('f', 300)
	for i, dir := range []contract.Direction{contract.PutDir, contract.GetDir} {
		d, err := f.roundTrip(uint64(i+1), dir, view(names, 0, 300, 0))
		require.NoError(t, err)
		assert.Positive(t, d)
	}
	require.NoError(t, f.close())
}
