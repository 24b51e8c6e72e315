package broken

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// Driver is a [contract.Driver] that behaves like the [memdrv.Driver] it
// wraps except for one broken [Rule]. Its methods are safe for concurrent
// use, as memdrv's are.
type Driver struct {
	rule  Rule
	inner *memdrv.Driver

	mu        sync.Mutex
	callbacks []func()                // OnChangeAfterDrain: every onChange given
	armed     bool                    // OnChangeAfterDrain: a Drain returned true
	owed      []contract.Registration // UnregisterWhileBusy: answered nil, still registered
}

var _ contract.Driver = (*Driver)(nil)

// New returns a driver over s with the options o that breaks rule. An
// unknown rule is an error naming it.
func New(rule Rule, s *memdrv.Store, o memdrv.Options) (*Driver, error) {
	if !slices.Contains(rules, rule) {
		return nil, fmt.Errorf("broken: unknown rule %q", rule)
	}
	d := &Driver{rule: rule, inner: memdrv.New(s, o)}
	if bend := rowEndFor(rule, d.inner); bend != nil {
		d.inner.OnRowEnd(bend)
	}
	return d, nil
}

// Rule returns the rule the driver breaks.
func (d *Driver) Rule() Rule { return d.rule }

// Inner returns the wrapped memdrv driver, for its scenario hooks.
// Calling its driver methods directly bypasses the deviation.
func (d *Driver) Inner() *memdrv.Driver { return d.inner }

// Capabilities returns the wrapped driver's, with Cancel declared under
// IgnoresCancel.
func (d *Driver) Capabilities() contract.Capabilities {
	c := d.inner.Capabilities()
	if d.rule == IgnoresCancel {
		c.Cancel = true
	}
	return c
}

// Register registers r with the wrapped driver.
func (d *Driver) Register(r contract.SlotRegion) (contract.Registration, error) {
	return d.inner.Register(r)
}

// Unregister revokes reg in the wrapped driver; under UnregisterWhileBusy
// a busy region is answered nil (see [UnregisterWhileBusy]).
func (d *Driver) Unregister(reg contract.Registration) error {
	d.lateCallbacks()
	err := d.inner.Unregister(reg)
	if d.rule == UnregisterWhileBusy && errors.Is(err, memdrv.ErrRegionBusy) {
		d.mu.Lock()
		d.owed = append(d.owed, reg)
		d.mu.Unlock()
		return nil
	}
	return err
}

// Put starts a put in the wrapped driver; under PanicsInPut it panics.
func (d *Driver) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	if d.rule == PanicsInPut {
		panic("broken: panics-in-put: Put panics in the caller's goroutine")
	}
	op, err := d.inner.Put(b, d.callback(onChange))
	return d.wrap(op, err)
}

// Get starts a get in the wrapped driver; under NilOperation it returns
// (nil, nil) and admits nothing.
func (d *Driver) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	if d.rule == NilOperation {
		return nil, nil
	}
	op, err := d.inner.Get(b, h, d.callback(onChange))
	return d.wrap(op, err)
}

// Drain drains the wrapped driver (see [DrainTrueWhileLive] and
// [OnChangeAfterDrain] for the deviations).
func (d *Driver) Drain(ctx context.Context) bool {
	d.lateCallbacks()
	ok := d.inner.Drain(ctx)
	if !ok && d.rule == DrainTrueWhileLive && d.inner.Live() > 0 {
		return true
	}
	if ok {
		d.settleOwed()
		if d.rule == OnChangeAfterDrain {
			d.mu.Lock()
			d.armed = true
			d.mu.Unlock()
		}
	}
	return ok
}

// Close closes the wrapped driver, first revoking what
// UnregisterWhileBusy still owes.
func (d *Driver) Close() error {
	d.lateCallbacks()
	d.settleOwed()
	return d.inner.Close()
}

// callback returns the onChange to hand the wrapped driver.
func (d *Driver) callback(onChange func()) func() {
	switch d.rule {
	case NoOnChange:
		return nil
	case OnChangeAfterDrain:
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

// settleOwed revokes, in the wrapped driver, the registrations
// UnregisterWhileBusy answered nil for, as far as they are no longer
// busy.
func (d *Driver) settleOwed() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.owed = slices.DeleteFunc(d.owed, func(reg contract.Registration) bool {
		return d.inner.Unregister(reg) == nil
	})
}

// wrap applies the deviations of Put's and Get's answers.
func (d *Driver) wrap(op contract.Operation, err error) (contract.Operation, error) {
	if err != nil {
		if d.rule == UnwrappedError {
			return nil, errors.New(err.Error())
		}
		return nil, err
	}
	switch d.rule {
	case WrongResultCount, AccessEndsBeforeResults, ResultsChangeAfterFinal, UnprovableNotTerminal, IgnoresCancel:
		return &operation{rule: d.rule, inner: op}, nil
	}
	return op, nil
}
