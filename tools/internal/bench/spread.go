package bench

import (
	"math"
	"slices"
	"time"
)

// spread is a figure measured once per repetition: the median of the
// repetitions and the smallest and largest of them.
type spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// spreadOf summarises one figure per repetition. An empty list gives the
// zero spread.
func spreadOf(perRep []float64) spread {
	if len(perRep) == 0 {
		return spread{}
	}
	s := slices.Clone(perRep)
	slices.Sort(s)
	return spread{Median: median(s), Min: s[0], Max: s[len(s)-1], N: len(s)}
}

// median of sorted values: the middle one, or the mean of the middle two.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// latency summarises a set of durations, in milliseconds: the mean, the
// 50th and 99th percentile and the largest.
type latency struct {
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P99Ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
	N      int     `json:"n"`
}

// latencyOf summarises ds (the nearest-rank percentiles).
func latencyOf(ds []time.Duration) latency {
	if len(ds) == 0 {
		return latency{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return latency{
		MeanMs: ms(sum / time.Duration(len(s))),
		P50Ms:  ms(rank(s, 0.50)),
		P99Ms:  ms(rank(s, 0.99)),
		MaxMs:  ms(s[len(s)-1]),
		N:      len(s),
	}
}

// rank is the nearest-rank percentile q (0 < q ≤ 1) of sorted durations.
func rank(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// mean of durations; 0 for none.
func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ratio is a/b, and 0 when b is not positive: a floor that measured
// nothing makes no ratio (JSON has no NaN).
func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}
