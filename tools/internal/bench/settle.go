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
	// repetitions.
	Kvshare settleSide `json:"kvshare"`
	Floor   settleSide `json:"floor"`
	// Ratio is kvshare's mean submission-to-settle over the floor's,
	// one per repetition: of the fetches when they run alone, of every
	// submission beside publishes. RatioP50 the same of the medians;
	// FetchRatio of the fetches' means in either mode.
	Ratio      spread      `json:"ratio"`
	RatioP50   spread      `json:"ratio_p50"`
	FetchRatio spread      `json:"fetch_ratio"`
	Reps       []settleRep `json:"reps"`
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

// settleRep is one repetition of a case: the two sides' mean settle
// (what Ratio compares) and their ratio.
type settleRep struct {
	KvshareMeanMs float64 `json:"kvshare_mean_ms"`
	FloorMeanMs   float64 `json:"floor_mean_ms"`
	Ratio         float64 `json:"ratio"`
}

// settleModes are the modes of measurement 1.
var settleModes = []mode{fetchAlone, besidePublishes}

// measureSettle runs measurement 1: per repetition, per shape and mode,
// Ticks ticks of each side at the fixed rate, the sides taking turns
// tick by tick (which goes first changes every repetition).
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
// turns; a tick that starts late (the one before overran) starts at
// once.
func (r *settleRig) alternate(ctx context.Context, s shape, m mode, n int, floorFirst bool) (kv, fl []tick, err error) {
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

// newSettleCase turns a case's ticks into its figures and ratios.
func newSettleCase(s shape, m mode, period time.Duration, reps [][2][]tick) (settleCase, error) {
	c := settleCase{Shape: s.String(), Mode: m.String(), Rows: s.total(), PeriodMs: ms(period)}
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
		c.Reps = append(c.Reps, settleRep{KvshareMeanMs: ms(mean(kvSettle)), FloorMeanMs: ms(mean(flSettle)), Ratio: r})
		ratios = append(ratios, r)
		p50s = append(p50s, ratio(latencyOf(kvSettle).P50Ms, latencyOf(flSettle).P50Ms))
		fetchRatios = append(fetchRatios, ratio(float64(mean(settled(rp[0], fetchAlone))), float64(mean(settled(rp[1], fetchAlone)))))
	}
	c.Kvshare = newSettleSide(pooled[0], cpu[0])
	c.Floor = newSettleSide(pooled[1], cpu[1])
	c.Ratio, c.RatioP50, c.FetchRatio = spreadOf(ratios), spreadOf(p50s), spreadOf(fetchRatios)
	return c, nil
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
	if side == 0 {
		return "kvshare"
	}
	return "the floor"
}
