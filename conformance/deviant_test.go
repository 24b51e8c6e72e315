package conformance

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// Deviations memdrv/broken does not stage, built here over memdrv: each
// must fail its own check, within the harness's Wait, without the suite
// hanging or freeing memory it cannot account for.

// deviantHarness builds memdrv drivers with options o, wrapped by wrap.
func deviantHarness(wrap func(*memdrv.Driver) contract.Driver, o memdrv.Options) Harness {
	return Harness{New: func() (*Subject, error) {
		s := memdrv.NewStore()
		d := memdrv.New(s, quiet(o))
		return memSubject(wrap(d), d, s), nil
	}}
}

// accessOnlyDrain, asked to Drain with no time left, answers from the
// access states of the operations it handed out alone: true once every
// one reads Ended, even while a worker is still inside its last
// onChange. With time left it drains as memdrv does, so the suite's
// probe with an expired context is what must catch it.
type accessOnlyDrain struct {
	*memdrv.Driver
	mu  *sync.Mutex
	ops *[]contract.Operation
}

func (d accessOnlyDrain) keep(op contract.Operation, err error) (contract.Operation, error) {
	if err == nil {
		d.mu.Lock()
		*d.ops = append(*d.ops, op)
		d.mu.Unlock()
	}
	return op, err
}

func (d accessOnlyDrain) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	return d.keep(d.Driver.Put(b, onChange))
}

func (d accessOnlyDrain) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	return d.keep(d.Driver.Get(b, h, onChange))
}

func (d accessOnlyDrain) Drain(ctx context.Context) bool {
	if ctx.Err() == nil {
		return d.Driver.Drain(ctx)
	}
	d.mu.Lock()
	ops := slices.Clone(*d.ops)
	d.mu.Unlock()
	for _, op := range ops {
		if op.Poll(nil).Access != contract.Ended {
			return d.Driver.Drain(ctx)
		}
	}
	d.Driver.Drain(ctx) // stops taking work; its answer would wait for the callback
	return true
}

// lockedCallbacks calls onChange under a lock that Poll takes too.
type lockedCallbacks struct {
	*memdrv.Driver
	mu *sync.Mutex
}

func (d lockedCallbacks) locked(onChange func()) func() {
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		onChange()
	}
}

func (d lockedCallbacks) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	op, err := d.Driver.Put(b, d.locked(onChange))
	if err != nil {
		return nil, err
	}
	return lockedPoll{op, d.mu}, nil
}

func (d lockedCallbacks) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	op, err := d.Driver.Get(b, h, d.locked(onChange))
	if err != nil {
		return nil, err
	}
	return lockedPoll{op, d.mu}, nil
}

type lockedPoll struct {
	contract.Operation
	mu *sync.Mutex
}

func (o lockedPoll) Poll(dst []contract.RowStatus) contract.OpState {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.Operation.Poll(dst)
}

// impatientDrain never waits: Drain answers at once whatever its
// context allows.
type impatientDrain struct{ *memdrv.Driver }

func (d impatientDrain) Drain(context.Context) bool {
	now, cancel := context.WithCancel(context.Background())
	cancel()
	return d.Driver.Drain(now)
}

// silentDrainCancel drops the callbacks for the changes Drain makes (the
// rows it cancels), so Drain answers true with no onChange for them.
type silentDrainCancel struct {
	*memdrv.Driver
	draining *atomic.Bool
}

func (d silentDrainCancel) callback(onChange func()) func() {
	return func() {
		if !d.draining.Load() {
			onChange()
		}
	}
}

func (d silentDrainCancel) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	return d.Driver.Put(b, d.callback(onChange))
}

func (d silentDrainCancel) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	return d.Driver.Get(b, h, d.callback(onChange))
}

func (d silentDrainCancel) Drain(ctx context.Context) bool {
	d.draining.Store(true)
	defer d.draining.Store(false)
	return d.Driver.Drain(ctx)
}

// oneAtATime admits a call only once the operation before it ended its
// access: a row held inside the store delays every later Put and Get.
type oneAtATime struct {
	*memdrv.Driver
	turn chan struct{} // holds a token while an operation is open
}

func (d oneAtATime) admit(start func(onChange func()) (contract.Operation, error), onChange func()) (contract.Operation, error) {
	d.turn <- struct{}{}
	var op atomic.Pointer[contract.Operation]
	var once sync.Once
	done := func() { once.Do(func() { <-d.turn }) }
	o, err := start(func() {
		if p := op.Load(); p != nil && (*p).Poll(nil).Access != contract.Open {
			defer done()
		}
		onChange()
	})
	if err != nil {
		done()
		return nil, err
	}
	op.Store(&o)
	if o.Poll(nil).Access != contract.Open {
		done()
	}
	return o, nil
}

func (d oneAtATime) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	return d.admit(func(f func()) (contract.Operation, error) { return d.Driver.Put(b, f) }, onChange)
}

func (d oneAtATime) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	return d.admit(func(f func()) (contract.Operation, error) { return d.Driver.Get(b, h, f) }, onChange)
}

// callbackCatches: a Drain that ignores a running callback, never
// waits, or answers before the callbacks of the rows it cancelled;
// callbacks under Poll's lock; admission that waits for a held row.
func callbackCatches() []catch {
	put := memdrv.Options{Put: true}
	control := memHarness(put, false)
	return []catch{
		{
			name: "access-only-drain",
			deviant: deviantHarness(func(d *memdrv.Driver) contract.Driver {
				return accessOnlyDrain{d, new(sync.Mutex), new([]contract.Operation)}
			}, put),
			control: control, check: "drain-waits-for-callback",
			violation: "onChange call(s) of the operation had not returned: a worker calls onChange before it counts itself finished",
		},
		{
			name:    "callbacks-under-poll-lock",
			deviant: deviantHarness(func(d *memdrv.Driver) contract.Driver { return lockedCallbacks{d, new(sync.Mutex)} }, put),
			control: control, check: "poll-in-callback", violation: "Poll called from inside onChange did not return within",
		},
		{
			name:    "impatient-drain",
			deviant: deviantHarness(func(d *memdrv.Driver) contract.Driver { return impatientDrain{d} }, put),
			control: control, check: "drain-waits-for-rows", violation: "Drain returned false without looking at its context",
		},
		{
			name:    "silent-drain-cancel",
			deviant: deviantHarness(func(d *memdrv.Driver) contract.Driver { return silentDrainCancel{d, new(atomic.Bool)} }, put),
			control: control, check: "drain-cancels-queued", violation: "Drain returned true, yet no onChange call of the operation had returned",
		},
		{
			name:    "one-at-a-time",
			deviant: deviantHarness(func(d *memdrv.Driver) contract.Driver { return oneAtATime{d, make(chan struct{}, 1)} }, put),
			control: control, check: "held-row", violation: `put of 1 row (name "behind-0"): Put did not return within`,
		},
	}
}
