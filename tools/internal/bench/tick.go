package bench

import (
	"fmt"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/tools/internal/poolfloor"
)

// mode is what a tick submits: the shape's fetches alone, or its fetches
// with as many publishes beside them.
type mode int

const (
	fetchAlone      mode = iota // the shape's fetches
	besidePublishes             // its fetches, each with a publish of as many rows
)

func (m mode) String() string {
	if m == besidePublishes {
		return "fetch+publish"
	}
	return "fetch"
}

// tick is what one tick of one side measured.
type tick struct {
	fetch     []time.Duration // submission to settle, per fetch
	all       []time.Duration // per submission, fetches and publishes
	submit    []time.Duration // the submit calls (the floor: queueing its parts)
	firstCall time.Duration   // from the first submission to the first SDK call
	cpu       time.Duration   // process CPU from the first submission to the last settle
	rows      int             // rows submitted
	ready     int             // rows that came back Ready
}

// kvshareTick submits the shape's views through the backend, fetch
// first and (beside publishes) its publish right after, and waits until
// every attempt has its outcome and has quiesced.
func (r *settleRig) kvshareTick(s shape, m mode) (tick, error) {
	p := r.ticks[s]
	var t tick
	type sub struct {
		a     contract.Attempt
		start time.Duration
		fetch bool
	}
	subs := make([]sub, 0, 2*s.Submissions)
	cpu0 := processCPU()
	r.kvProbe.arm()
	begin := now()
	for j := range s.Submissions {
		start := now()
		a, err := r.kv.backend.Fetch(p.fetchViews[j], nil)
		t.submit = append(t.submit, now()-start)
		if err != nil {
			return t, fmt.Errorf("bench: fetch %v: %w", s, err)
		}
		subs = append(subs, sub{a, start, true})
		if m == besidePublishes {
			start := now()
			a, err := r.kv.backend.Publish(p.pubViews[j], nil)
			t.submit = append(t.submit, now()-start)
			if err != nil {
				return t, fmt.Errorf("bench: publish %v: %w", s, err)
			}
			subs = append(subs, sub{a, start, false})
		}
	}
	chans := make([]<-chan struct{}, len(subs))
	for i, x := range subs {
		chans[i] = x.a.Done()
	}
	ends := waitAll(chans)
	t.cpu = processCPU() - cpu0
	if f, ok := r.kvProbe.firstCall(); ok {
		t.firstCall = f - begin
	}
	for i, x := range subs {
		o, known := x.a.Outcome()
		if !known {
			return t, fmt.Errorf("bench: %v: an attempt quiesced without its outcome", s)
		}
		t.rows += len(o.Delivered)
		t.ready += delivered(o)
		d := ends[i] - x.start
		t.all = append(t.all, d)
		if x.fetch {
			t.fetch = append(t.fetch, d)
		}
	}
	return t, nil
}

// floorTick queues the same calls on the floor's goroutines, in the same
// order, and waits until every part is done.
func (r *settleRig) floorTick(s shape, m mode) (tick, error) {
	queue := func(fs *poolfloor.Submission) error {
		r.fl.Submit(fs)
		return nil
	}
	return r.queuedTick(queue, r.flProbe, s, m)
}

// ruleFloorTick queues the same calls on the rule-following floor's
// pool, in the same order, and waits until every part is done.
func (r *settleRig) ruleFloorTick(s shape, m mode) (tick, error) {
	return r.queuedTick(r.rf.submit, r.rfProbe, s, m)
}

// queuedTick is a floor's tick: queue takes each prepared submission,
// fetch first and (beside publishes) its publish right after; pr is the
// probe of that floor's client.
func (r *settleRig) queuedTick(queue func(*poolfloor.Submission) error, pr *probe, s shape, m mode) (tick, error) {
	p := r.ticks[s]
	var t tick
	type sub struct {
		fs    *poolfloor.Submission
		start time.Duration
		fetch bool
	}
	subs := make([]sub, 0, 2*s.Submissions)
	cpu0 := processCPU()
	pr.arm()
	begin := now()
	for j := range s.Submissions {
		start := now()
		err := queue(p.floorFetch[j])
		t.submit = append(t.submit, now()-start)
		if err != nil {
			return t, fmt.Errorf("bench: floor fetch %v: %w", s, err)
		}
		subs = append(subs, sub{p.floorFetch[j], start, true})
		if m == besidePublishes {
			start := now()
			err := queue(p.floorPub[j])
			t.submit = append(t.submit, now()-start)
			if err != nil {
				return t, fmt.Errorf("bench: floor publish %v: %w", s, err)
			}
			subs = append(subs, sub{p.floorPub[j], start, false})
		}
	}
	chans := make([]<-chan struct{}, len(subs))
	for i, x := range subs {
		chans[i] = x.fs.Done()
	}
	ends := waitAll(chans)
	t.cpu = processCPU() - cpu0
	if f, ok := pr.firstCall(); ok {
		t.firstCall = f - begin
	}
	for i, x := range subs {
		t.rows += x.fs.Rows()
		t.ready += x.fs.Ready()
		d := ends[i] - x.start
		t.all = append(t.all, d)
		if x.fetch {
			t.fetch = append(t.fetch, d)
		}
	}
	return t, nil
}

// period is the fixed submission rate's period for a shape and mode:
// two and a half times the least time its calls can take on the
// workers, and at least 4 ms, so that ticks rarely overlap the next.
func (r *settleRig) period(s shape, m mode) time.Duration {
	per := poolfloor.Cut(r.opts.RowBytes, r.opts.RowsPerCall, r.opts.BytesPerCall)
	parts := s.Submissions * ((s.Rows + per - 1) / per)
	calls, depth := parts, 1
	if m == besidePublishes {
		calls, depth = 3*parts, 2 // a put part is a put and an exists-check, one after the other
	}
	rounds := max(depth, (calls+r.opts.Workers-1)/r.opts.Workers)
	return max(4*time.Millisecond, time.Duration(rounds)*r.opts.Latency*5/2)
}
