package bench

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// SettleReport is measurement 1: the seed's CPU benchmark, kvshare
// against the floor, per shape and mode.
type SettleReport struct {
	RowBytes     int64        `json:"row_bytes"`
	SDKLatencyMs float64      `json:"sdk_latency_ms"`
	Workers      int          `json:"workers"`
	RowsPerCall  int          `json:"rows_per_call"`
	BytesPerCall int64        `json:"bytes_per_call"`
	Cases        []SettleCase `json:"cases"`
}

// SettleCase is one shape and mode.
type SettleCase struct {
	Shape    string  `json:"shape"`
	Mode     string  `json:"mode"`
	Rows     int     `json:"rows"` // rows fetched per tick
	PeriodMs float64 `json:"period_ms"`
	// Kvshare and Floor are every tick's figures, pooled over the
	// repetitions.
	Kvshare SettleSide `json:"kvshare"`
	Floor   SettleSide `json:"floor"`
	// Ratio is kvshare's mean submission-to-settle over the floor's,
	// one per repetition: of the fetches when they run alone, of every
	// submission beside publishes. RatioP50 the same of the medians;
	// FetchRatio of the fetches' means in either mode.
	Ratio      Spread      `json:"ratio"`
	RatioP50   Spread      `json:"ratio_p50"`
	FetchRatio Spread      `json:"fetch_ratio"`
	Reps       []SettleRep `json:"reps"`
}

// SettleSide is one side's figures in a case.
type SettleSide struct {
	Fetch     Latency `json:"fetch_settle"`
	All       Latency `json:"all_settle"`
	Submit    Latency `json:"submit_call"`
	FirstCall Latency `json:"first_sdk_call"`
	// CPUPerSubmissionMs is the process's CPU time per submission, one
	// figure per repetition.
	CPUPerSubmissionMs Spread `json:"cpu_per_submission_ms"`
}

// SettleRep is one repetition of a case: the two sides' mean settle
// (what Ratio compares) and their ratio.
type SettleRep struct {
	KvshareMeanMs float64 `json:"kvshare_mean_ms"`
	FloorMeanMs   float64 `json:"floor_mean_ms"`
	Ratio         float64 `json:"ratio"`
}

// settleModes are the modes of measurement 1.
var settleModes = []Mode{FetchAlone, BesidePublishes}

// measureSettle runs measurement 1: per repetition, per shape and mode,
// Ticks ticks of each side at the fixed rate, the sides taking turns
// tick by tick (which goes first changes every repetition).
func measureSettle(ctx context.Context, o Options, step func(string)) (*SettleReport, error) {
	rig, err := newSettleRig(o.Settle, settleShapes, observed(o, SettleLatency))
	if err != nil {
		return nil, err
	}
	rep := &SettleReport{
		RowBytes: o.Settle.RowBytes, SDKLatencyMs: ms(o.Settle.Latency), Workers: o.Settle.Workers,
		RowsPerCall: o.Settle.RowsPerCall, BytesPerCall: o.Settle.BytesPerCall,
	}
	type key struct {
		s Shape
		m Mode
	}
	runs := map[key][][2][]tick{} // per repetition: kvshare's ticks, the floor's
	for r := range o.Reps {
		for _, s := range settleShapes {
			for _, m := range settleModes {
				step(fmt.Sprintf("1 settle %v %v", s, m))
				kv, fl, err := rig.alternate(ctx, s, m, o.Settle.Ticks, r%2 == 1)
				if err != nil {
					return nil, errors.Join(err, rig.close())
				}
				runs[key{s, m}] = append(runs[key{s, m}], [2][]tick{kv, fl})
			}
		}
	}
	if err := rig.close(); err != nil {
		return nil, err
	}
	for _, s := range settleShapes {
		for _, m := range settleModes {
			c, err := settleCase(s, m, rig.period(s, m), runs[key{s, m}])
			if err != nil {
				return nil, err
			}
			rep.Cases = append(rep.Cases, c)
		}
	}
	return rep, nil
}

// alternate runs n ticks of each side at the shape's fixed rate, taking
// turns; a tick that starts late (the one before overran) starts at
// once.
func (r *settleRig) alternate(ctx context.Context, s Shape, m Mode, n int, floorFirst bool) (kv, fl []tick, err error) {
	period := r.period(s, m)
	start := time.Now()
	for k := range 2 * n {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if d := time.Until(start.Add(time.Duration(k) * period)); d > 0 {
			time.Sleep(d)
		}
		if (k%2 == 0) != floorFirst {
			t, err := r.kvshareTick(s, m)
			if err != nil {
				return nil, nil, err
			}
			kv = append(kv, t)
		} else {
			t, err := r.floorTick(s, m)
			if err != nil {
				return nil, nil, err
			}
			fl = append(fl, t)
		}
	}
	return kv, fl, nil
}

// settleCase turns a case's ticks into its figures and ratios.
func settleCase(s Shape, m Mode, period time.Duration, reps [][2][]tick) (SettleCase, error) {
	c := SettleCase{Shape: s.String(), Mode: m.String(), Rows: s.total(), PeriodMs: ms(period)}
	var ratios, p50s, fetchRatios []float64
	var cpu [2][]float64
	var pooled [2][]tick
	for _, rp := range reps {
		for side, ticks := range rp {
			for _, t := range ticks {
				if t.ready != t.rows {
					return c, fmt.Errorf("bench: %v %v: %s delivered %d of %d rows", s, m, sideName(side), t.ready, t.rows)
				}
			}
			pooled[side] = append(pooled[side], ticks...)
			cpu[side] = append(cpu[side], cpuPerSubmission(ticks))
		}
		kvSettle, flSettle := settled(rp[0], m), settled(rp[1], m)
		r := ratio(float64(mean(kvSettle)), float64(mean(flSettle)))
		c.Reps = append(c.Reps, SettleRep{KvshareMeanMs: ms(mean(kvSettle)), FloorMeanMs: ms(mean(flSettle)), Ratio: r})
		ratios = append(ratios, r)
		p50s = append(p50s, ratio(latencyOf(kvSettle).P50Ms, latencyOf(flSettle).P50Ms))
		fetchRatios = append(fetchRatios, ratio(float64(mean(settled(rp[0], FetchAlone))), float64(mean(settled(rp[1], FetchAlone)))))
	}
	c.Kvshare = settleSide(pooled[0], cpu[0])
	c.Floor = settleSide(pooled[1], cpu[1])
	c.Ratio, c.RatioP50, c.FetchRatio = spreadOf(ratios), spreadOf(p50s), spreadOf(fetchRatios)
	return c, nil
}

// settled is the settle times a mode's ratio compares: the fetches'
// alone, every submission's beside publishes.
func settled(ticks []tick, m Mode) []time.Duration {
	var out []time.Duration
	for _, t := range ticks {
		if m == FetchAlone {
			out = append(out, t.fetch...)
		} else {
			out = append(out, t.all...)
		}
	}
	return out
}

// settleSide pools a side's ticks.
func settleSide(ticks []tick, cpu []float64) SettleSide {
	var fetch, all, submit, first []time.Duration
	for _, t := range ticks {
		fetch = append(fetch, t.fetch...)
		all = append(all, t.all...)
		submit = append(submit, t.submit...)
		first = append(first, t.firstCall)
	}
	return SettleSide{
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
	if side == 0 {
		return "kvshare"
	}
	return "the floor"
}
