package bench

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// loopReport is measurement 2: the busy engine loop alone, beside the
// floor's traffic and beside kvshare's.
type loopReport struct {
	WindowMs float64 `json:"window_ms"`
	StallMs  float64 `json:"stall_ms"`
	PhaseS   float64 `json:"phase_s"`
	// ItemUs is one work item's mean time alone, in µs.
	ItemUs    float64 `json:"item_us"`
	AloneRate spread  `json:"alone_items_per_s"`
	// FloorKeep and KvshareKeep are the fraction of the alone-rate the
	// loop keeps beside each side's traffic, one per repetition;
	// KeepRatio is kvshare's over the floor's.
	FloorKeep   spread `json:"floor_keep"`
	KvshareKeep spread `json:"kvshare_keep"`
	KeepRatio   spread `json:"keep_ratio"`
	// Stalls are gaps over StallMs between two items, per repetition.
	AloneStalls   []int `json:"alone_stalls"`
	FloorStalls   []int `json:"floor_stalls"`
	KvshareStalls []int `json:"kvshare_stalls"`
	// Submissions per phase, per repetition.
	FloorSubmissions   []int `json:"floor_submissions"`
	KvshareSubmissions []int `json:"kvshare_submissions"`
	// CPU per submission: the process's CPU time in the phase less the
	// loop thread's own, over the phase's submissions, in ms; CPURatio
	// kvshare's over the floor's, per repetition.
	FloorCPUPerSubmissionMs   spread `json:"floor_cpu_per_submission_ms"`
	KvshareCPUPerSubmissionMs spread `json:"kvshare_cpu_per_submission_ms"`
	CPURatio                  spread `json:"cpu_ratio"`
	// Trace is the last repetition's items per window, per phase.
	Trace loopTrace `json:"trace"`
}

// loopTrace is the items per window of each phase of one repetition.
type loopTrace struct {
	Alone   []int `json:"alone"`
	Floor   []int `json:"floor"`
	Kvshare []int `json:"kvshare"`
}

// trafficTick is one tick of a side's traffic.
type trafficTick func(shape, mode) (tick, error)

// measureLoop runs measurement 2: per repetition, the loop alone, then
// beside the floor's traffic and beside kvshare's (which goes first
// changes every repetition). The traffic is measurement 1's: the
// shapes in turn, fetches beside publishes, each at its fixed rate.
func measureLoop(ctx context.Context, o Options, step func(string)) (*loopReport, error) {
	rig, err := newSettleRig(o.Settle, settleShapes, observed(o, EngineLoop))
	if err != nil {
		return nil, err
	}
	l := o.Loop
	rep := &loopReport{WindowMs: ms(l.Window), StallMs: ms(l.Stall), PhaseS: l.Phase.Seconds()}
	var alone, floorKeep, kvKeep, keep, flCPU, kvCPU, cpuRatio, itemUs []float64
	for r := range o.Reps {
		step("2 engine loop alone")
		a := engineLoop(l.Phase, l.Window, l.Stall, l.Item)
		var fl, kv phase
		order := []bool{false, true} // floor, then kvshare
		if r%2 == 1 {
			order = []bool{true, false}
		}
		for _, isKv := range order {
			tickFn, name := trafficTick(rig.floorTick), "floor"
			if isKv {
				tickFn, name = rig.kvshareTick, "kvshare"
			}
			step("2 engine loop beside " + name)
			ph, err := runBeside(ctx, l, rig, tickFn)
			if err != nil {
				return nil, errors.Join(err, rig.close())
			}
			if isKv {
				kv = ph
			} else {
				fl = ph
			}
		}
		alone = append(alone, a.rate())
		if a.items > 0 {
			itemUs = append(itemUs, float64(a.elapsed.Microseconds())/float64(a.items))
		}
		fk, kk := ratio(fl.loop.rate(), a.rate()), ratio(kv.loop.rate(), a.rate())
		floorKeep, kvKeep, keep = append(floorKeep, fk), append(kvKeep, kk), append(keep, ratio(kk, fk))
		fc, kc := fl.cpuPerSubmission(), kv.cpuPerSubmission()
		flCPU, kvCPU, cpuRatio = append(flCPU, fc), append(kvCPU, kc), append(cpuRatio, ratio(kc, fc))
		rep.AloneStalls = append(rep.AloneStalls, a.stalls)
		rep.FloorStalls = append(rep.FloorStalls, fl.loop.stalls)
		rep.KvshareStalls = append(rep.KvshareStalls, kv.loop.stalls)
		rep.FloorSubmissions = append(rep.FloorSubmissions, fl.submissions)
		rep.KvshareSubmissions = append(rep.KvshareSubmissions, kv.submissions)
		rep.Trace = loopTrace{Alone: a.windows, Floor: fl.loop.windows, Kvshare: kv.loop.windows}
	}
	if err := rig.close(); err != nil {
		return nil, err
	}
	rep.AloneRate, rep.FloorKeep, rep.KvshareKeep, rep.KeepRatio = spreadOf(alone), spreadOf(floorKeep), spreadOf(kvKeep), spreadOf(keep)
	rep.FloorCPUPerSubmissionMs, rep.KvshareCPUPerSubmissionMs, rep.CPURatio = spreadOf(flCPU), spreadOf(kvCPU), spreadOf(cpuRatio)
	rep.ItemUs = spreadOf(itemUs).Median
	return rep, nil
}

// phase is one traffic phase: the loop's count, the submissions made
// and the CPU the traffic took.
type phase struct {
	loop        loopRun
	submissions int
	cpu         time.Duration // the process's CPU in the phase, less the loop thread's
}

func (p phase) cpuPerSubmission() float64 {
	if p.submissions == 0 {
		return 0
	}
	return ms(p.cpu) / float64(p.submissions)
}

// runBeside runs the loop for a phase while tick makes traffic: the
// shapes in turn, fetches beside publishes, each tick at its shape's
// fixed rate, until the loop is done.
func runBeside(ctx context.Context, l loopOptions, rig *settleRig, tick trafficTick) (phase, error) {
	var p phase
	cpu0 := processCPU()
	done := make(chan loopRun, 1)
	go func() { done <- engineLoop(l.Phase, l.Window, l.Stall, l.Item) }()
	var err error
	next := time.Now()
	for k := 0; ; k++ {
		select {
		case p.loop = <-done:
			p.cpu = processCPU() - cpu0 - p.loop.cpu
			return p, err
		default:
		}
		if err != nil || ctx.Err() != nil {
			time.Sleep(time.Millisecond) // let the loop finish; report the error then
			if err == nil {
				err = ctx.Err()
			}
			continue
		}
		s := settleShapes[k%len(settleShapes)]
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		next = time.Now().Add(rig.period(s, besidePublishes))
		t, terr := tick(s, besidePublishes)
		if terr == nil && t.ready != t.rows {
			terr = fmt.Errorf("bench: engine loop traffic %v: %d of %d rows delivered", s, t.ready, t.rows)
		}
		err = terr
		p.submissions += len(t.all)
	}
}
