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
	reps := [][][]tick{
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
	assert.Nil(t, c.RuleFloor, "fetches alone have no rule-following floor")
	assert.Nil(t, c.RuleRatio)
	assert.Nil(t, c.RuleCost)
	assert.Zero(t, c.Reps[0].RuleRatio)
}

// Beside publishes the ratios are of every submission's settle, against
// both floors: kvshare over the rule-following floor (the goal), and the
// rule-following floor over the unconstrained one (what the rules cost),
// each of the same repetition.
func TestSettleRatiosBesidePublishesAgainstBothFloors(t *testing.T) {
	ms := time.Millisecond
	reps := [][][]tick{
		{ticksOf(2*ms, 4*ms), ticksOf(2*ms, 2*ms), ticksOf(3*ms, 3*ms)},
		{ticksOf(3*ms, 3*ms), ticksOf(3*ms, 3*ms), ticksOf(3*ms, 3*ms)},
		{ticksOf(8*ms, 8*ms), ticksOf(4*ms, 4*ms), ticksOf(4*ms, 4*ms)},
	}
	c, err := newSettleCase(shape{1, 256}, besidePublishes, 4*ms, reps)
	require.NoError(t, err)
	r := c.Reps[0]
	assert.InDelta(t, 1.5, r.Ratio, 1e-12, "(2+4+4+8)/4 over (2+2+4+4)/4")
	assert.InDelta(t, 4.5, r.KvshareMeanMs, 1e-12)
	assert.InDelta(t, 3, r.FloorMeanMs, 1e-12)
	assert.InDelta(t, 4.5, r.RuleFloorMeanMs, 1e-12, "(3+3+6+6)/4")
	assert.InDelta(t, 1, r.RuleRatio, 1e-12, "kvshare / the rule-following floor")
	assert.InDelta(t, 1.5, r.RuleCost, 1e-12, "the rule-following floor / the floor")

	require.NotNil(t, c.RuleFloor)
	require.NotNil(t, c.RuleRatio)
	require.NotNil(t, c.RuleRatioP50)
	require.NotNil(t, c.RuleFetchRatio)
	require.NotNil(t, c.RuleCost)
	require.NotNil(t, c.RuleCostFetch)
	assert.Equal(t, spread{Median: 1, Min: 1, Max: 2, N: 3}, *c.RuleRatio, "1, 1, 2")
	assert.Equal(t, spread{Median: 1, Min: 1, Max: 1.5, N: 3}, *c.RuleCost, "1.5, 1, 1")
	assert.Equal(t, spread{Median: 1, Min: 1, Max: 1.5, N: 3}, *c.RuleCostFetch, "fetches: 3/2, 3/3, 4/4")
	assert.Equal(t, spread{Median: 1, Min: 1, Max: 2, N: 3}, *c.RuleFetchRatio, "fetches: 3/3, 3/3, 8/4")
	assert.Equal(t, spread{Median: 1.5, Min: 1, Max: 2, N: 3}, c.Ratio, "the unconstrained floor's ratio keeps its meaning")
	assert.Equal(t, 6, c.RuleFloor.Fetch.N, "every tick of every repetition, pooled")
	assert.Equal(t, 12, c.RuleFloor.All.N)
}

func TestSettleCaseRefusesMissingSides(t *testing.T) {
	ms := time.Millisecond
	_, err := newSettleCase(shape{1, 256}, besidePublishes, ms, [][][]tick{{ticksOf(ms), ticksOf(ms)}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2 sides measured, want 3")

	bad := ticksOf(ms)
	bad[0].ready = 0
	_, err = newSettleCase(shape{1, 256}, besidePublishes, ms, [][][]tick{{ticksOf(ms), ticksOf(ms), bad}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the rule-following floor delivered 0 of 1 rows")
}

// Which side goes first, and which runs in whose wake, changes every
// repetition: two sides alternate, three go through their six orders.
func TestTurnOrderChangesEveryRepetition(t *testing.T) {
	assert.Equal(t, []int{0, 1}, turnOrder(2, 0), "kvshare first on even repetitions")
	assert.Equal(t, []int{1, 0}, turnOrder(2, 1))
	assert.Equal(t, []int{0, 1}, turnOrder(2, 2))

	seen := map[[3]int]bool{}
	first := map[int]int{}
	for r := range 6 {
		o := turnOrder(3, r)
		require.Len(t, o, 3)
		seen[[3]int(o)] = true
		first[o[0]]++
	}
	assert.Len(t, seen, 6, "every order of three sides once in six repetitions")
	assert.Equal(t, map[int]int{0: 2, 1: 2, 2: 2}, first)
	assert.Equal(t, []int{0, 1, 2}, turnOrder(3, 0))
	assert.Equal(t, []int{2, 1, 0}, turnOrder(3, 5))
	assert.Equal(t, turnOrder(3, 0), turnOrder(3, 6))
}

func TestSettleCaseRefusesRowsNotDelivered(t *testing.T) {
	bad := ticksOf(time.Millisecond)
	bad[0].ready = 0
	_, err := newSettleCase(shape{1, 256}, fetchAlone, time.Millisecond, [][][]tick{{ticksOf(time.Millisecond), bad}})
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
		if c.Mode == besidePublishes.String() {
			require.NotNil(t, c.RuleFloor, "%s: the rule-following floor beside publishes", c.Shape)
			assert.Equal(t, o.Reps*o.Settle.Ticks*shape.Submissions, c.RuleFloor.Fetch.N, "%s", c.Shape)
			assert.Equal(t, 2*o.Reps*o.Settle.Ticks*shape.Submissions, c.RuleFloor.All.N, "%s: fetches and publishes", c.Shape)
			require.NotNil(t, c.RuleRatio)
			require.NotNil(t, c.RuleCost)
			var ruleRatios, costs []float64
			for _, r := range c.Reps {
				assert.Positive(t, r.RuleFloorMeanMs)
				assert.InDelta(t, r.KvshareMeanMs/r.RuleFloorMeanMs, r.RuleRatio, 1e-9)
				assert.InDelta(t, r.RuleFloorMeanMs/r.FloorMeanMs, r.RuleCost, 1e-9)
				ruleRatios, costs = append(ruleRatios, r.RuleRatio), append(costs, r.RuleCost)
			}
			assert.Equal(t, spreadOf(ruleRatios), *c.RuleRatio)
			assert.Equal(t, spreadOf(costs), *c.RuleCost)
		} else {
			assert.Nil(t, c.RuleFloor, "%s: fetches alone have no rule-following floor", c.Shape)
			assert.Nil(t, c.RuleRatio)
		}
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
