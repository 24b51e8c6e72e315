package bench

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
	"github.com/kvshare/kvshare/tools/internal/poolfloor"
)

// settlePrefix is the key prefix of measurements 1 and 2.
const settlePrefix = "bench/settle"

// settleRig is measurements 1 and 2's stage: one fake pool whose data
// calls sleep settleOptions.Latency; on one side kvshare (a backend over
// a Mooncake driver over a client of the pool), on the other the floor
// (bare goroutines over another client) and, for measurement 1 beside
// publishes, the rule-following floor (the same parts through a
// scheduler pool, over a third client). Every side uses one staging
// region, never two at the same time: fetch slots [0, maxRows), publish
// slots [maxRows, 2·maxRows).
// Every object a fetch reads was published before the clock starts, and
// publishes put those same keys again, which the store answers at once
// (a put never overwrites): both sides make the same calls on the same
// objects.
type settleRig struct {
	opts    settleOptions
	store   *fakesdk.Store
	kv      *lender
	kvProbe *probe
	fl      *poolfloor.Loop
	flProbe *probe
	rf      *ruleFloor
	rfProbe *probe
	flMem   *memdrv.Memory
	maxRows int
	ticks   map[shape]*tickPlan
}

// tickPlan is one shape's submissions, prepared for every side (the two
// floors share theirs, never at the same time).
type tickPlan struct {
	shape      shape
	fetchViews []contract.View
	pubViews   []contract.View
	floorFetch []*poolfloor.Submission
	floorPub   []*poolfloor.Submission
}

// newSettleRig builds the stage and publishes every object the shapes
// fetch.
func newSettleRig(o settleOptions, shapes []shape, obs observation) (*settleRig, error) {
	r := &settleRig{opts: o, ticks: map[shape]*tickPlan{}}
	for _, s := range shapes {
		r.maxRows = max(r.maxRows, s.total())
	}
	r.store = fakesdk.New(fakesdk.Options{Latency: o.Latency})
	r.kvProbe = &probe{Client: r.store.Client()}
	drv, err := mooncakedrv.New(r.kvProbe, mooncakedrv.Config{
		Workers: o.Workers, RowsPerCall: o.RowsPerCall, BytesPerCall: o.BytesPerCall,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, err
	}
	if r.kv, err = newLender(drv, o.RowBytes, 2*r.maxRows, binding.Config{KeyPrefix: settlePrefix}, obs); err != nil {
		return nil, err
	}
	// The floors move rows between the store and the same slots as
	// kvshare (never at the same time): no difference of memory
	// between the sides.
	r.flMem = r.kv.mems[0]
	r.flProbe = &probe{Client: r.store.Client()}
	r.fl = poolfloor.Start(r.flProbe, o.Workers)
	r.rfProbe = &probe{Client: r.store.Client()}
	if r.rf, err = newRuleFloor(r.rfProbe, o.Workers); err != nil {
		return nil, errors.Join(err, r.close())
	}

	fetchNames, pubNames := rowNames('f', r.maxRows), rowNames('p', r.maxRows)
	if err := r.warm(fetchNames, pubNames); err != nil {
		return nil, errors.Join(err, r.close())
	}
	stem, err := keys.NewStem(settlePrefix)
	if err != nil {
		return nil, errors.Join(err, r.close())
	}
	for _, s := range shapes {
		p := &tickPlan{shape: s}
		for j := range s.Submissions {
			lo, hi := j*s.Rows, (j+1)*s.Rows
			p.fetchViews = append(p.fetchViews, view(fetchNames, lo, hi, 0))
			p.pubViews = append(p.pubViews, view(pubNames, lo, hi, r.maxRows))
			p.floorFetch = append(p.floorFetch, r.prepare(contract.GetDir, stem, fetchNames[lo:hi], lo))
			p.floorPub = append(p.floorPub, r.prepare(contract.PutDir, stem, pubNames[lo:hi], r.maxRows+lo))
		}
		r.ticks[s] = p
	}
	return r, nil
}

// prepare builds a floor submission of names in the floor's slots from
// first on.
func (r *settleRig) prepare(dir contract.Direction, stem keys.Stem, names [][]byte, first int) *poolfloor.Submission {
	addrs := make([]uintptr, len(names))
	for i := range addrs {
		addrs[i] = r.flMem.Region.Base + uintptr(int64(first+i)*r.opts.RowBytes)
	}
	return poolfloor.Prepare(dir, stem, names, addrs, r.opts.RowBytes, 0, r.opts.RowsPerCall, r.opts.BytesPerCall)
}

// warm publishes every name of both sets through kvshare, so that every
// fetch finds its object and every publish finds its key stored.
func (r *settleRig) warm(fetchNames, pubNames [][]byte) error {
	var attempts []contract.Attempt
	for _, v := range []contract.View{view(fetchNames, 0, r.maxRows, 0), view(pubNames, 0, r.maxRows, r.maxRows)} {
		a, err := r.kv.backend.Publish(v, nil)
		if err != nil {
			return fmt.Errorf("bench: warm-up publish: %w", err)
		}
		attempts = append(attempts, a)
	}
	for _, a := range attempts {
		<-a.Done()
		o, _ := a.Outcome()
		if n := delivered(o); n != len(o.Delivered) {
			return fmt.Errorf("bench: warm-up publish delivered %d of %d rows (fault: %v)", n, len(o.Delivered), o.Fault)
		}
	}
	return nil
}

// close gives everything back.
func (r *settleRig) close() error {
	var errs []error
	if r.fl != nil {
		r.fl.Stop()
	}
	if r.rf != nil {
		errs = append(errs, r.rf.stop())
	}
	if r.kv != nil {
		errs = append(errs, r.kv.close())
	}
	return errors.Join(errs...)
}

// waitAll waits for every channel and returns when each was seen
// closed (since epoch), each on a goroutine of its own so that one
// settling late does not delay the note of another.
func waitAll(chans []<-chan struct{}) []time.Duration {
	ends := make([]time.Duration, len(chans))
	var wg sync.WaitGroup
	for i, c := range chans {
		wg.Go(func() {
			<-c
			ends[i] = now()
		})
	}
	wg.Wait()
	return ends
}
