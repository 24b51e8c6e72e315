package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ticksOf(settle ...time.Duration) []tick {
	var out []tick
	for _, d := range settle {
		out = append(out, tick{fetch: []time.Duration{d}, all: []time.Duration{d, 2 * d}, rows: 1, ready: 1, cpu: d})
	}
	return out
}

// The ratio of each repetition is kvshare's mean over the floor's mean
// of the same repetition; the goal's value is their median.
func TestSettleRatiosComeFromTheFloorOfTheSameRepetition(t *testing.T) {
	ms := time.Millisecond
	reps := [][2][]tick{
		{ticksOf(2*ms, 4*ms), ticksOf(2*ms, 2*ms)}, // 3/2
		{ticksOf(3*ms, 3*ms), ticksOf(3*ms, 3*ms)}, // 1
		{ticksOf(8*ms, 8*ms), ticksOf(4*ms, 4*ms)}, // 2
	}
	c, err := newSettleCase(shape{1, 256}, fetchAlone, 4*ms, reps)
	require.NoError(t, err)
	require.Len(t, c.Reps, 3)
	assert.InDelta(t, 1.5, c.Reps[0].Ratio, 1e-12)
	assert.InDelta(t, 3, c.Reps[0].KvshareMeanMs, 1e-12)
	assert.InDelta(t, 2, c.Reps[0].FloorMeanMs, 1e-12)
	assert.Equal(t, spread{Median: 1.5, Min: 1, Max: 2, N: 3}, c.Ratio)
	assert.Equal(t, "1x256", c.Shape)
	assert.Equal(t, 256, c.Rows)
	assert.Equal(t, 6, c.Kvshare.Fetch.N, "every tick of every repetition, pooled")
	assert.InDelta(t, 1.5, c.Kvshare.CPUPerSubmissionMs.Min, 1e-9, "CPU over every submission (two a tick): (2+4)/4")

	// Beside publishes the ratio is of every submission's settle.
	c, err = newSettleCase(shape{1, 256}, besidePublishes, 4*ms, reps)
	require.NoError(t, err)
	assert.InDelta(t, 1.5, c.Reps[0].Ratio, 1e-12, "(2+4+4+8)/4 over (2+2+4+4)/4")
	assert.InDelta(t, 4.5, c.Reps[0].KvshareMeanMs, 1e-12)
}

func TestSettleCaseRefusesRowsNotDelivered(t *testing.T) {
	bad := ticksOf(time.Millisecond)
	bad[0].ready = 0
	_, err := newSettleCase(shape{1, 256}, fetchAlone, time.Millisecond, [][2][]tick{{ticksOf(time.Millisecond), bad}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the floor delivered 0 of 1 rows")
}

func TestSettleMeasuresEveryShapeAndMode(t *testing.T) {
	o := tiny()
	var steps []string
	rep, err := measureSettle(t.Context(), o, func(s string) { steps = append(steps, s) })
	require.NoError(t, err)
	assert.Len(t, steps, o.Reps*3*2)
	require.Len(t, rep.Cases, 6)
	for i, c := range rep.Cases {
		shape := settleShapes[i/2]
		assert.Equal(t, shape.String(), c.Shape)
		require.Len(t, c.Reps, o.Reps, "%s %s", c.Shape, c.Mode)
		var ratios []float64
		for _, r := range c.Reps {
			assert.Positive(t, r.FloorMeanMs)
			assert.InDelta(t, r.KvshareMeanMs/r.FloorMeanMs, r.Ratio, 1e-9)
			ratios = append(ratios, r.Ratio)
		}
		assert.Equal(t, spreadOf(ratios), c.Ratio)
		assert.Equal(t, o.Reps*o.Settle.Ticks*shape.Submissions, c.Kvshare.Fetch.N, "%s", c.Shape)
		assert.Equal(t, o.Reps*o.Settle.Ticks*shape.Submissions, c.Floor.Fetch.N, "%s", c.Shape)
		assert.Positive(t, c.Kvshare.FirstCall.N)
		assert.Positive(t, c.Floor.Submit.N)
	}
	assert.Equal(t, "fetch+publish", rep.Cases[1].Mode)
	assert.Equal(t, 512, int(rep.RowBytes))
}

func TestPeriodCoversTheCalls(t *testing.T) {
	r := &settleRig{opts: settleOptions{RowBytes: 4096, Latency: time.Millisecond, Workers: 4, RowsPerCall: 256, BytesPerCall: 128 << 20}}
	assert.Equal(t, 4*time.Millisecond, r.period(shape{1, 256}, fetchAlone), "at least 4 ms")
	assert.Equal(t, 10*time.Millisecond, r.period(shape{1, 4096}, fetchAlone), "16 parts on 4 workers: 4 ms, ×2.5")
	assert.Equal(t, 30*time.Millisecond, r.period(shape{1, 4096}, besidePublishes), "48 calls on 4 workers: 12 ms, ×2.5")
	assert.Equal(t, 5*time.Millisecond, r.period(shape{1, 256}, besidePublishes), "a put and its exists-check one after the other")
}
