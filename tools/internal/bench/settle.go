package bench

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// settleReport is measurement 1, submission to settle: kvshare
// against the floor, per shape and mode.
type settleReport struct {
	RowBytes     int64        `json:"row_bytes"`
	SDKLatencyMs float64      `json:"sdk_latency_ms"`
	Workers      int          `json:"workers"`
	RowsPerCall  int          `json:"rows_per_call"`
	BytesPerCall int64        `json:"bytes_per_call"`
	Cases        []settleCase `json:"cases"`
}

// settleCase is one shape and mode.
type settleCase struct {
	Shape    string  `json:"shape"`
	Mode     string  `json:"mode"`
	Rows     int     `json:"rows"` // rows fetched per tick
	PeriodMs float64 `json:"period_ms"`
	// Kvshare and Floor are every tick's figures, pooled over the
	// repetitions. Floor is the unconstrained floor: bare goroutines,
	// gets before puts, puts on every one.
	Kvshare settleSide `json:"kvshare"`
	Floor   settleSide `json:"floor"`
	// Ratio is kvshare's mean submission-to-settle over the floor's,
	// one per repetition: of the fetches when they run alone, of every
	// submission beside publishes. RatioP50 the same of the medians;
	// FetchRatio of the fetches' means in either mode.
	Ratio      spread `json:"ratio"`
	RatioP50   spread `json:"ratio_p50"`
	FetchRatio spread `json:"fetch_ratio"`
	// Beside publishes only (nil, and absent from the JSON, when the
	// fetches run alone): RuleFloor is the rule-following floor's
	// figures, the same calls as the floor dispatched in the driver's
	// order (puts on at most max(1, workers−1) workers, a queued put
	// taken once four gets have passed it). RuleRatio is kvshare's mean
	// settle of every submission over the rule-following floor's, one
	// per repetition (the goal beside publishes); RuleRatioP50 the same
	// of the medians, RuleFetchRatio of the fetches' means. RuleCost is
	// the rule-following floor's mean settle of every submission over
	// the floor's (what the rules themselves cost against unconstrained
	// goroutines), RuleCostFetch the same of the fetches' means (below
	// 1: what the fetches gain by them).
	RuleFloor      *settleSide `json:"rule_floor,omitempty"`
	RuleRatio      *spread     `json:"rule_ratio,omitempty"`
	RuleRatioP50   *spread     `json:"rule_ratio_p50,omitempty"`
	RuleFetchRatio *spread     `json:"rule_fetch_ratio,omitempty"`
	RuleCost       *spread     `json:"rule_cost,omitempty"`
	RuleCostFetch  *spread     `json:"rule_cost_fetch,omitempty"`
	Reps           []settleRep `json:"reps"`
}

// settleSide is one side's figures in a case.
type settleSide struct {
	Fetch     latency `json:"fetch_settle"`
	All       latency `json:"all_settle"`
	Submit    latency `json:"submit_call"`
	FirstCall latency `json:"first_sdk_call"`
	// CPUPerSubmissionMs is the process's CPU time per submission, one
	// figure per repetition.
	CPUPerSubmissionMs spread `json:"cpu_per_submission_ms"`
}

// settleRep is one repetition of a case: the sides' mean settle (what
// Ratio, RuleRatio and RuleCost compare) and their ratios; the
// rule-following floor's figures beside publishes only.
type settleRep struct {
	KvshareMeanMs   float64 `json:"kvshare_mean_ms"`
	FloorMeanMs     float64 `json:"floor_mean_ms"`
	Ratio           float64 `json:"ratio"`
	RuleFloorMeanMs float64 `json:"rule_floor_mean_ms,omitempty"`
	RuleRatio       float64 `json:"rule_ratio,omitempty"`
	RuleCost        float64 `json:"rule_cost,omitempty"`
}

// settleModes are the modes of measurement 1.
var settleModes = []mode{fetchAlone, besidePublishes}

// The sides of measurement 1, in the order of a repetition's ticks
// (before turnOrder shuffles them): kvshare, the floor and, beside
// publishes, the rule-following floor.
const (
	kvshareSide = iota
	floorSide
	ruleFloorSide
)

// sides are the ticks of a mode's sides, indexed as kvshareSide …: the
// rule-following floor only beside publishes, where the driver's rules
// decide an order (fetches alone are gets alone, which both floors take
// in the same order).
func (r *settleRig) sides(m mode) []trafficTick {
	if m == besidePublishes {
		return []trafficTick{r.kvshareTick, r.floorTick, r.ruleFloorTick}
	}
	return []trafficTick{r.kvshareTick, r.floorTick}
}

// measureSettle runs measurement 1: per repetition, per shape and mode,
// Ticks ticks of each side at the fixed rate, the sides taking turns
// tick by tick (in an order that changes every repetition).
func measureSettle(ctx context.Context, o Options, step func(string)) (*settleReport, error) {
	rig, err := newSettleRig(o.Settle, settleShapes, observed(o, SettleLatency))
	if err != nil {
		return nil, err
	}
	rep := &settleReport{
		RowBytes: o.Settle.RowBytes, SDKLatencyMs: ms(o.Settle.Latency), Workers: o.Settle.Workers,
		RowsPerCall: o.Settle.RowsPerCall, BytesPerCall: o.Settle.BytesPerCall,
	}
	type key struct {
		s shape
		m mode
	}
	runs := map[key][][][]tick{} // per repetition, per side: its ticks
	for r := range o.Reps {
		for _, s := range settleShapes {
			for _, m := range settleModes {
				step(fmt.Sprintf("1 settle %v %v", s, m))
				sides := rig.sides(m)
				ticks, err := rig.alternate(ctx, s, m, o.Settle.Ticks, sides, turnOrder(len(sides), r))
				if err != nil {
					return nil, errors.Join(err, rig.close())
				}
				runs[key{s, m}] = append(runs[key{s, m}], ticks)
			}
		}
	}
	if err := rig.close(); err != nil {
		return nil, err
	}
	for _, s := range settleShapes {
		for _, m := range settleModes {
			c, err := newSettleCase(s, m, rig.period(s, m), runs[key{s, m}])
			if err != nil {
				return nil, err
			}
			rep.Cases = append(rep.Cases, c)
		}
	}
	return rep, nil
}

// alternate runs n ticks of each side at the shape's fixed rate, taking
// turns in order (side indexes); a tick that starts late (the one before
// overran) starts at once. It returns each side's ticks, indexed as
// sides.
func (r *settleRig) alternate(ctx context.Context, s shape, m mode, n int, sides []trafficTick, order []int) ([][]tick, error) {
	period := r.period(s, m)
	out := make([][]tick, len(sides))
	start := time.Now()
	for k := range len(order) * n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if d := time.Until(start.Add(time.Duration(k) * period)); d > 0 {
			time.Sleep(d)
		}
		side := order[k%len(order)]
		t, err := sides[side](s, m)
		if err != nil {
			return nil, err
		}
		out[side] = append(out[side], t)
	}
	return out, nil
}

// newSettleCase turns a case's ticks (per repetition, per side) into its
// figures and ratios. Beside publishes every repetition has the three
// sides; fetches alone, kvshare and the floor.
func newSettleCase(s shape, m mode, period time.Duration, reps [][][]tick) (settleCase, error) {
	c := settleCase{Shape: s.String(), Mode: m.String(), Rows: s.total(), PeriodMs: ms(period)}
	want := 2
	if m == besidePublishes {
		want = 3
	}
	var ratios, p50s, fetchRatios, ruleRatios, ruleP50s, ruleFetch, costs, costsFetch []float64
	cpu := make([][]float64, want)
	pooled := make([][]tick, want)
	for _, rp := range reps {
		if len(rp) != want {
			return c, fmt.Errorf("bench: %v %v: %d sides measured, want %d", s, m, len(rp), want)
		}
		for side, ticks := range rp {
			for _, t := range ticks {
				if t.ready != t.rows {
					return c, fmt.Errorf("bench: %v %v: %s delivered %d of %d rows", s, m, sideName(side), t.ready, t.rows)
				}
			}
			pooled[side] = append(pooled[side], ticks...)
			cpu[side] = append(cpu[side], cpuPerSubmission(ticks))
		}
		kv, fl := meansOf(rp[kvshareSide], m), meansOf(rp[floorSide], m)
		r := settleRep{KvshareMeanMs: ms(kv.mean), FloorMeanMs: ms(fl.mean), Ratio: ratio(float64(kv.mean), float64(fl.mean))}
		ratios = append(ratios, r.Ratio)
		p50s = append(p50s, ratio(kv.p50, fl.p50))
		fetchRatios = append(fetchRatios, ratio(float64(kv.fetch), float64(fl.fetch)))
		if want == 3 {
			rf := meansOf(rp[ruleFloorSide], m)
			r.RuleFloorMeanMs = ms(rf.mean)
			r.RuleRatio = ratio(float64(kv.mean), float64(rf.mean))
			r.RuleCost = ratio(float64(rf.mean), float64(fl.mean))
			ruleRatios = append(ruleRatios, r.RuleRatio)
			ruleP50s = append(ruleP50s, ratio(kv.p50, rf.p50))
			ruleFetch = append(ruleFetch, ratio(float64(kv.fetch), float64(rf.fetch)))
			costs = append(costs, r.RuleCost)
			costsFetch = append(costsFetch, ratio(float64(rf.fetch), float64(fl.fetch)))
		}
		c.Reps = append(c.Reps, r)
	}
	c.Kvshare = newSettleSide(pooled[kvshareSide], cpu[kvshareSide])
	c.Floor = newSettleSide(pooled[floorSide], cpu[floorSide])
	c.Ratio, c.RatioP50, c.FetchRatio = spreadOf(ratios), spreadOf(p50s), spreadOf(fetchRatios)
	if want == 3 {
		rf := newSettleSide(pooled[ruleFloorSide], cpu[ruleFloorSide])
		c.RuleFloor = &rf
		c.RuleRatio, c.RuleRatioP50, c.RuleFetchRatio = spreadPtr(ruleRatios), spreadPtr(ruleP50s), spreadPtr(ruleFetch)
		c.RuleCost, c.RuleCostFetch = spreadPtr(costs), spreadPtr(costsFetch)
	}
	return c, nil
}

// sideMeans is one side's figures in one repetition: the mean and
// median settle the mode's ratio compares, and the fetches' mean.
type sideMeans struct {
	mean  time.Duration
	p50   float64 // ms
	fetch time.Duration
}

// meansOf is a side's figures in one repetition of mode m.
func meansOf(ticks []tick, m mode) sideMeans {
	d := settled(ticks, m)
	return sideMeans{mean: mean(d), p50: latencyOf(d).P50Ms, fetch: mean(settled(ticks, fetchAlone))}
}

// spreadPtr is spreadOf for a field that only some cases have.
func spreadPtr(perRep []float64) *spread {
	s := spreadOf(perRep)
	return &s
}

// spreadOr is *p, or the zero spread (printed "-", never a goal met)
// when p is nil.
func spreadOr(p *spread) spread {
	if p == nil {
		return spread{}
	}
	return *p
}

// settled is the settle times a mode's ratio compares: the fetches'
// alone, every submission's beside publishes.
func settled(ticks []tick, m mode) []time.Duration {
	var out []time.Duration
	for _, t := range ticks {
		if m == fetchAlone {
			out = append(out, t.fetch...)
		} else {
			out = append(out, t.all...)
		}
	}
	return out
}

// newSettleSide pools a side's ticks.
func newSettleSide(ticks []tick, cpu []float64) settleSide {
	var fetch, all, submit, first []time.Duration
	for _, t := range ticks {
		fetch = append(fetch, t.fetch...)
		all = append(all, t.all...)
		submit = append(submit, t.submit...)
		first = append(first, t.firstCall)
	}
	return settleSide{
		Fetch: latencyOf(fetch), All: latencyOf(all), Submit: latencyOf(submit), FirstCall: latencyOf(first),
		CPUPerSubmissionMs: spreadOf(cpu),
	}
}

// cpuPerSubmission is the ticks' process CPU per submission, in ms.
func cpuPerSubmission(ticks []tick) float64 {
	var cpu time.Duration
	subs := 0
	for _, t := range ticks {
		cpu += t.cpu
		subs += len(t.all)
	}
	if subs == 0 {
		return 0
	}
	return ms(cpu) / float64(subs)
}

func sideName(side int) string {
	switch side {
	case kvshareSide:
		return "kvshare"
	case floorSide:
		return "the floor"
	}
	return "the rule-following floor"
}
