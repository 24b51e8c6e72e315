package bench

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
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
	assert.Contains(t, out.String(), "real pool: "+nodePoolNotDone)
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
