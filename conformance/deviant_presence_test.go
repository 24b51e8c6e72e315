package conformance

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/broken"
)

// The lookup checks under Capabilities.PresenceFromIndex: a driver that
// declares it answers Present from the store's index, so a get made
// right after may end Fault; it may never find the object absent or
// torn.

// fromIndex is a driver that declares PresenceFromIndex on top of what
// the driver it wraps declares, and looks up through it.
type fromIndex struct {
	contract.Driver
	looker contract.Looker
}

func (f fromIndex) Capabilities() contract.Capabilities {
	c := f.Driver.Capabilities()
	c.PresenceFromIndex = true
	return c
}

func (f fromIndex) Lookup(ctx context.Context, b contract.LookupBatch, dst []contract.Presence) ([]contract.Presence, error) {
	return f.looker.Lookup(ctx, b, dst)
}

// declaringIndex makes every driver h builds declare PresenceFromIndex.
func declaringIndex(h Harness) Harness {
	inner := h.New
	h.New = func() (*Subject, error) {
		s, err := inner()
		if s != nil {
			s.Driver = fromIndex{Driver: s.Driver, looker: s.Driver.(contract.Looker)}
		}
		return s, err
	}
	return h
}

// fetchFaultsHarness builds memdrv drivers whose gets that would end
// Ready end Fault instead (their access ended): a store whose index
// lists an object whose holder does not answer.
func fetchFaultsHarness() Harness {
	return Harness{New: func() (*Subject, error) {
		s := memdrv.NewStore()
		d := memdrv.New(s, quiet(memdrv.Options{}))
		d.OnRowEnd(func(e memdrv.RowEnd) contract.RowStatus {
			if e.Dir == memdrv.GetDir && e.Status == contract.Ready {
				return contract.Fault
			}
			return e.Status
		})
		return memSubject(d, d, s), nil
	}}
}

// TestPresenceFromIndex: a get of a Present name that ends Fault is a
// finding without the capability and is accepted (logged) with it; a
// name Present for a torn object is caught with the capability too.
func TestPresenceFromIndex(t *testing.T) {
	cs := []catch{{
		name:      "presence-from-index/undeclared",
		deviant:   fetchFaultsHarness(),
		control:   declaringIndex(fetchFaultsHarness()),
		check:     "lookup-whole",
		violation: `name "whole" read present, but a get made right after ended [fault]: Present means a get now would read the object whole`,
	}, {
		name:      "presence-from-index/torn",
		deviant:   declaringIndex(brokenHarness(broken.PresentForTorn, memdrv.Options{})),
		control:   declaringIndex(memHarness(memdrv.Options{}, false)),
		check:     "lookup-whole",
		violation: `name "crashed" read present, but a get made right after ended [miss]: with PresenceFromIndex, Present means the store's index holds the whole object`,
	}}
	results := runCatches(cs)
	for i, c := range cs {
		t.Run(c.name, func(t *testing.T) { c.assert(t, results[i]) })
	}
	assert.True(t, anyContains(results[0].control.logged(), "the driver declares PresenceFromIndex, so its Present is the store's index"),
		"the accepted fault is logged: %q", results[0].control.logged())
}
