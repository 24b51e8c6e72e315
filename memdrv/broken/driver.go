package broken

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// Driver is a [contract.Driver] that behaves like the [memdrv.Driver] it
// wraps except for one broken [Rule]; it is a [contract.Looker] and a
// [contract.Recycler] as memdrv's is. Its methods are safe for concurrent use, as memdrv's are.
type Driver struct {
	rule  Rule
	inner *memdrv.Driver
	store *memdrv.Store
	log   *slog.Logger // NamesAfterEnd's log of finished operations
	// pollLock is DrainCallbackUnderLock's lock: every Poll takes it, and
	// Drain holds it while it calls back. It is a channel, not a mutex,
	// so that a goroutine waiting for it is durably blocked in a
	// testing/synctest bubble.
	pollLock chan struct{}
	// admission is LookupBlocksAdmission's lock: a lookup holds it while
	// inside the store, and Put and Get take it. A channel, like
	// pollLock.
	admission chan struct{}
	// shadow is AdmitsLookupAfterDrain's second memdrv driver over the
	// same store, never drained: it answers the lookups after a Drain.
	shadow *memdrv.Driver

	mu          sync.Mutex
	callbacks   []func()                // OnChangeAfterDrain, LateOnChangeAfterDrain: every onChange given
	armed       bool                    // OnChangeAfterDrain: a Drain returned true
	owed        []contract.Registration // UnregisterWhileBusy, UnregisterIgnoresQueued: answered nil, still registered; CleanRefusalWhenLive: refused, yet live
	regions     map[contract.Registration]contract.SlotRegion
	ops         []*operation    // DrainCallbackUnderLock, NamesAfterEnd, CancelCallsBack, RecycleGivesUpEndsAccess: every operation handed out
	firsts      []firstRow      // UnregisterFirstRowOnly: the first row of every operation
	due         []afterEnd      // GetWritesAfterEnd, PutRereadsAfterEnd: effects for the next call
	drainCalled bool            // CloseAfterFalseDrain, AdmitsLookupAfterDrain
	puts        []ownPut        // PresentForOwnPut, PresentWhileWriting: every put handed out, until it ended
	torn        map[string]bool // PresentForTorn: keys whose put ended Fault
	looks       lookupState     // the further lookup rules (see lookup_more.go)
	crashed     atomic.Bool     // CapabilitiesChangeAfterCrash: a store call crashed
	recycled    recycleState    // the recycle rules (see recycle.go)
}

var _ contract.Driver = (*Driver)(nil)

// New returns a driver over s with the options o that breaks rule. An
// unknown rule is an error naming it.
func New(rule Rule, s *memdrv.Store, o memdrv.Options) (*Driver, error) {
	if !slices.Contains(rules, rule) {
		return nil, fmt.Errorf("broken: unknown rule %q", rule)
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	d := &Driver{
		rule:      rule,
		inner:     memdrv.New(s, o),
		store:     s,
		log:       log,
		pollLock:  make(chan struct{}, 1),
		admission: make(chan struct{}, 1),
		regions:   make(map[contract.Registration]contract.SlotRegion),
		torn:      make(map[string]bool),
	}
	if bend := rowEndFor(rule, d.inner); bend != nil {
		d.inner.OnRowEnd(bend)
	}
	switch rule {
	case PresentForTorn:
		d.inner.OnRowEnd(d.noteTorn)
	case CapabilitiesChangeAfterCrash:
		d.inner.OnRowEnd(d.noteCrash)
	case AdmitsLookupAfterDrain, LookupAfterFalseDrain, LookupAfterClose:
		d.shadow = memdrv.New(s, o)
	}
	return d, nil
}

// Rule returns the rule the driver breaks.
func (d *Driver) Rule() Rule { return d.rule }

// Inner returns the wrapped memdrv driver, for its scenario hooks.
// Calling its driver methods directly bypasses the deviation.
func (d *Driver) Inner() *memdrv.Driver { return d.inner }

// Capabilities returns the wrapped driver's, with Cancel declared under
// IgnoresCancel and DeviceMemory under DeviceRefused; under
// CapabilitiesChangeAfterCrash, Cancel the other way round once a store
// call crashed or a Recycle ended every access.
func (d *Driver) Capabilities() contract.Capabilities {
	c := d.inner.Capabilities()
	switch d.rule {
	case IgnoresCancel:
		c.Cancel = true
	case DeviceRefused:
		c.DeviceMemory = true
	case CapabilitiesChangeAfterCrash:
		if d.crashed.Load() || d.inner.Recycles() > 0 {
			c.Cancel = !c.Cancel
		}
	}
	return c
}

// Register registers r with the wrapped driver; under DeviceRefused a
// Device region is refused, and under CleanRefusalWhenLive a failure
// that may be live is answered as a clean refusal.
func (d *Driver) Register(r contract.SlotRegion) (contract.Registration, error) {
	d.enter()
	if d.rule == DeviceRefused && r.Kind == contract.Device {
		return 0, fmt.Errorf("%w: broken: device-refused: a Device region, though DeviceMemory is declared", contract.ErrDriverRejected)
	}
	reg, err := d.inner.Register(r)
	if live, clean := d.cleanRefusal(err); live != 0 {
		d.mu.Lock()
		d.owed = append(d.owed, live)
		d.mu.Unlock()
		return 0, clean
	}
	if err == nil {
		d.mu.Lock()
		d.regions[reg] = r
		d.mu.Unlock()
	}
	return reg, err
}

// Unregister revokes reg in the wrapped driver; under UnregisterWhileBusy,
// UnregisterIgnoresQueued and UnregisterFirstRowOnly a busy region may be
// answered nil (see there), and under UnregisterDuringRecycle one asked
// while a Recycle runs.
func (d *Driver) Unregister(reg contract.Registration) error {
	d.enter()
	d.lateCallbacks()
	err := d.inner.Unregister(reg)
	if d.unregisterDuringRecycle(reg, err) {
		return nil
	}
	if errors.Is(err, memdrv.ErrRegionBusy) && d.liesAboutBusy(reg) {
		d.mu.Lock()
		d.owed = append(d.owed, reg)
		d.mu.Unlock()
		return nil
	}
	return err
}

// liesAboutBusy reports whether the rule answers nil to Unregister of
// the busy region reg.
func (d *Driver) liesAboutBusy(reg contract.Registration) bool {
	switch d.rule {
	case UnregisterWhileBusy:
		return true
	case UnregisterIgnoresQueued:
		d.mu.Lock()
		r, ok := d.regions[reg]
		d.mu.Unlock()
		n := d.inner.RowsIn(r)
		return ok && n.Queued > 0 && n.Running == 0 && n.Unprovable == 0
	case UnregisterFirstRowOnly:
		return !d.firstRowIn(reg)
	}
	return false
}

// Put starts a put in the wrapped driver; under PanicsInPut it panics,
// and under LookupBlocksAdmission it first waits for every lookup inside
// the store.
func (d *Driver) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	d.enter()
	d.admit()
	if d.rule == PanicsInPut {
		panic("broken: panics-in-put: Put panics in the caller's goroutine")
	}
	op, err := d.inner.Put(b, d.callback(onChange))
	return d.wrap(memdrv.PutDir, b, onChange, op, err)
}

// Get starts a get in the wrapped driver; under NilOperation it returns
// (nil, nil) and admits nothing, and under LookupBlocksAdmission it first
// waits for every lookup inside the store.
func (d *Driver) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	d.enter()
	d.admit()
	if d.rule == NilOperation {
		return nil, nil
	}
	op, err := d.inner.Get(b, h, d.callback(onChange))
	return d.wrap(memdrv.GetDir, b, onChange, op, err)
}

// Close closes the wrapped driver, first revoking what UnregisterWhileBusy
// and UnregisterIgnoresQueued still owe; under CloseAfterFalseDrain a
// refused Close is answered nil once any Drain was called and no region
// is registered.
func (d *Driver) Close() error {
	d.enter()
	d.lateCallbacks()
	d.settleOwed()
	err := d.inner.Close()
	if err == nil {
		d.noteLookupClosed()
	}
	if err == nil {
		d.noteClosed()
	}
	if err != nil && d.rule == CloseAfterFalseDrain {
		d.mu.Lock()
		drained := d.drainCalled
		d.mu.Unlock()
		if drained && len(d.inner.Regions()) == 0 {
			return nil
		}
	}
	return err
}

// callback returns the onChange to hand the wrapped driver.
func (d *Driver) callback(onChange func()) func() {
	switch d.rule {
	case NoOnChange:
		return nil
	case OnChangeAfterDrain, LateOnChangeAfterDrain:
		if onChange != nil {
			d.mu.Lock()
			d.callbacks = append(d.callbacks, onChange)
			d.mu.Unlock()
		}
	}
	return onChange
}

// lateCallbacks calls, once after each Drain that returned true, every
// onChange the driver was given (OnChangeAfterDrain only).
func (d *Driver) lateCallbacks() {
	d.mu.Lock()
	if !d.armed {
		d.mu.Unlock()
		return
	}
	d.armed = false
	cbs := slices.Clone(d.callbacks)
	d.mu.Unlock()
	for _, f := range cbs {
		f()
	}
}

// settleOwed revokes, in the wrapped driver, the registrations answered
// nil while busy, as far as they are no longer busy.
func (d *Driver) settleOwed() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.owed = slices.DeleteFunc(d.owed, func(reg contract.Registration) bool {
		return d.inner.Unregister(reg) == nil
	})
}

// wrap applies the deviations of Put's and Get's answers.
func (d *Driver) wrap(dir memdrv.Direction, b contract.RowBatch, onChange func(), op contract.Operation, err error) (contract.Operation, error) {
	if err != nil {
		if d.rule == UnwrappedError {
			return nil, errors.New(err.Error())
		}
		return nil, err
	}
	switch d.rule {
	case WrongResultCount, AccessEndsBeforeResults, ResultsChangeAfterFinal, UnprovableNotTerminal, IgnoresCancel,
		CancelEndsRunningRow, RowsReversed, EndsAtFirstFault, UnprovableEndsLater:
		return &operation{d: d, rule: d.rule, inner: op}, nil
	case UnregisterFirstRowOnly:
		d.keepFirstRow(op, b)
		return op, nil
	case PresentForOwnPut, PresentWhileWriting, PresentForDeclined, QueuedPutNotInFlight, InFlightAfterPutEnded:
		if dir == memdrv.PutDir {
			d.keepPut(op, b)
		}
		return op, nil
	case GetWritesAfterEnd, PutRereadsAfterEnd, DrainCallbackUnderLock, NamesAfterEnd, CancelCallsBack, RecycleGivesUpEndsAccess:
		o := &operation{d: d, rule: d.rule, inner: op, dir: dir, onChange: onChange}
		if d.rule == NamesAfterEnd {
			o.batch = b
		}
		if d.rule == PutRereadsAfterEnd {
			o.keys = make([]string, b.Len())
			for i := range b.Rows {
				o.keys[i] = b.Key(i)
			}
		}
		for _, r := range b.Rows {
			o.spans = append(o.spans, slices.Clone(r.Spans))
		}
		d.mu.Lock()
		d.ops = append(d.ops, o)
		d.mu.Unlock()
		return o, nil
	}
	return op, nil
}

// Drain drains the wrapped driver (see the Drain rules for the
// deviations).
func (d *Driver) Drain(ctx context.Context) bool {
	d.enter()
	d.lateCallbacks()
	d.mu.Lock()
	d.drainCalled = true
	d.mu.Unlock()
	if d.rule == NamesAfterEnd {
		d.logFinished()
	}
	early := ctx.Err() != nil
	if d.rule == AdmitsAfterFalseDrain && early && (d.inner.Live() > 0 || d.inner.Busy() > 0) {
		return false // stops nothing
	}
	if d.rule == AdmitsAfterDrainDeadline && !early && !d.idleWithin(ctx) {
		return false // stops nothing
	}
	var pending []*operation
	if d.rule == DrainCallbackUnderLock {
		pending = d.opsWithPendingRows()
	}
	ok := d.inner.Drain(ctx)
	if !ok && d.liesAboutDrain(early, ctx) {
		return true
	}
	if d.rule == DrainCallbackUnderLock {
		d.callBackUnderLock(pending)
	}
	if ok {
		d.settleOwed()
		d.afterTrueDrain()
	}
	return ok
}

// liesAboutDrain reports whether the rule answers true where the wrapped
// driver's Drain answered false. early says the context had ended before
// Drain was called.
func (d *Driver) liesAboutDrain(early bool, ctx context.Context) bool {
	switch d.rule {
	case DrainTrueWhileLive:
		return d.inner.Live() > 0
	case DrainIgnoresCallbacks:
		return d.inner.Live() == 0 && d.inner.Unprovable() == 0 && d.inner.Busy() > 0
	case DrainTrueWhenDeadline:
		return !early && ctx.Err() != nil && d.inner.Unprovable() == 0
	case DrainTrueUnprovableWithTime:
		return ctx.Err() == nil && d.inner.Live() == 0 && d.inner.Busy() == 0 && d.inner.Unprovable() > 0
	case DrainTrueWhileLookupInside:
		inside, _, _ := d.inner.Lookups()
		return inside > 0 && d.inner.Live() == 0 && d.inner.Busy() == 0 && d.inner.Unprovable() == 0
	}
	return false
}
