package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSpreadIsTheMedianAndTheExtremes(t *testing.T) {
	assert.Equal(t, spread{Median: 2, Min: 1, Max: 9, N: 3}, spreadOf([]float64{9, 1, 2}))
	assert.Equal(t, spread{Median: 2.5, Min: 1, Max: 9, N: 4}, spreadOf([]float64{9, 1, 2, 3}))
	assert.Equal(t, spread{}, spreadOf(nil))
	in := []float64{3, 1, 2}
	spreadOf(in)
	assert.Equal(t, []float64{3, 1, 2}, in, "the caller's slice is not sorted in place")
}

func TestLatencyPercentiles(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	l := latencyOf(ds)
	assert.Equal(t, 100, l.N)
	assert.InDelta(t, 50.5, l.MeanMs, 1e-9)
	assert.InDelta(t, 50, l.P50Ms, 1e-9, "nearest rank")
	assert.InDelta(t, 99, l.P99Ms, 1e-9)
	assert.InDelta(t, 100, l.MaxMs, 1e-9)
	assert.Equal(t, latency{}, latencyOf(nil))
}

func TestRatioOfNothingIsZero(t *testing.T) {
	assert.InDelta(t, 1.5, ratio(3, 2), 1e-12)
	assert.Zero(t, ratio(3, 0), "a floor that measured nothing makes no ratio (JSON has no NaN)")
}
