package broken

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// TogetherDriver is a [Driver] that also registers batches of regions
// ([contract.RegionsTogether]), through a [memdrv.TogetherDriver] over
// the driver it wraps. It breaks its Driver's one rule:
// TogetherBusyLastOnly bends UnregisterRegions, CleanRefusalWhenLive
// RegisterRegions too, and every other rule acts as in a Driver from
// [New]. Its methods are safe for concurrent use.
type TogetherDriver struct {
	*Driver
	together *memdrv.TogetherDriver

	mu      sync.Mutex
	batches map[contract.Registration][]contract.SlotRegion // every batch registered, by handle
	// owed are batches answered nil while busy (TogetherBusyLastOnly) or
	// refused though they may be live (CleanRefusalWhenLive): still
	// registered in the wrapped driver, revoked once idle, after a Drain
	// that returned true or at Close.
	owed []contract.Registration
}

var _ contract.RegionsTogether = (*TogetherDriver)(nil)

// NewTogether returns a driver over s with the options o that breaks
// rule and registers batches of regions. An unknown rule is an error
// naming it.
func NewTogether(rule Rule, s *memdrv.Store, o memdrv.Options) (*TogetherDriver, error) {
	d, err := New(rule, s, o)
	if err != nil {
		return nil, err
	}
	return &TogetherDriver{
		Driver:   d,
		together: &memdrv.TogetherDriver{Driver: d.inner},
		batches:  make(map[contract.Registration][]contract.SlotRegion),
	}, nil
}

// Together reports whether the rule is one of [contract.RegionsTogether],
// which only a driver from [NewTogether] shows.
func (r Rule) Together() bool { return r == TogetherBusyLastOnly }

// RegisterRegions registers the batch with the wrapped driver; under
// CleanRefusalWhenLive a failure that may be live is answered as a clean
// refusal.
func (t *TogetherDriver) RegisterRegions(specs []contract.RegionSpec) (contract.Registration, error) {
	t.enter()
	reg, err := t.together.RegisterRegions(specs)
	if live, clean := t.cleanRefusal(err); live != 0 {
		t.mu.Lock()
		t.owed = append(t.owed, live)
		t.mu.Unlock()
		return 0, clean
	}
	if err == nil {
		rs := make([]contract.SlotRegion, len(specs))
		for i, s := range specs {
			rs[i] = s.Region
		}
		t.mu.Lock()
		t.batches[reg] = rs
		t.mu.Unlock()
	}
	return reg, err
}

// UnregisterRegions revokes the batch in the wrapped driver; under
// TogetherBusyLastOnly a batch only an earlier region keeps busy is
// answered nil (see there).
func (t *TogetherDriver) UnregisterRegions(reg contract.Registration) error {
	t.enter()
	t.lateCallbacks()
	err := t.together.UnregisterRegions(reg)
	if errors.Is(err, memdrv.ErrRegionBusy) && t.rule == TogetherBusyLastOnly && !t.lastBusy(reg) {
		t.mu.Lock()
		t.owed = append(t.owed, reg)
		t.mu.Unlock()
		return nil
	}
	return err
}

// lastBusy reports whether rows keep the last region of the batch reg
// busy (TogetherBusyLastOnly).
func (t *TogetherDriver) lastBusy(reg contract.Registration) bool {
	t.mu.Lock()
	rs := t.batches[reg]
	t.mu.Unlock()
	if len(rs) == 0 {
		return false
	}
	n := t.inner.RowsIn(rs[len(rs)-1])
	return n.Queued+n.Running+n.Unprovable > 0
}

// Drain drains as the Driver does; after a Drain that returned true it
// revokes the batches it owes, as far as they are idle.
func (t *TogetherDriver) Drain(ctx context.Context) bool {
	ok := t.Driver.Drain(ctx)
	if ok {
		t.settleBatches()
	}
	return ok
}

// Close revokes the batches it owes, as far as they are idle, then
// closes as the Driver does.
func (t *TogetherDriver) Close() error {
	t.settleBatches()
	return t.Driver.Close()
}

// settleBatches revokes, in the wrapped driver, the batches it owes that
// are no longer busy.
func (t *TogetherDriver) settleBatches() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.owed = slices.DeleteFunc(t.owed, func(reg contract.Registration) bool {
		return t.together.UnregisterRegions(reg) == nil
	})
}
