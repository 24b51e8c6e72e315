package driverview

import (
	"context"

	"github.com/kvshare/kvshare/contract"
)

// The view's optional interfaces, each a small type that an embedding
// combination promotes: a combination exists for every set of them, so
// that a type assertion on the view finds exactly what the shared driver
// offers.

type looking struct{ v *View }

func (x looking) Lookup(ctx context.Context, b contract.LookupBatch, dst []contract.Presence) ([]contract.Presence, error) {
	return x.v.lookup(ctx, b, dst)
}

type together struct{ v *View }

func (x together) RegisterRegions(specs []contract.RegionSpec) (contract.Registration, error) {
	return x.v.registerRegions(specs)
}

func (x together) UnregisterRegions(reg contract.Registration) error {
	return x.v.unregisterRegions(reg)
}

type recycling struct{ v *View }

func (x recycling) Recycle(ctx context.Context) error { return x.v.recycle(ctx) }

type (
	viewL struct {
		*View
		looking
	}
	viewT struct {
		*View
		together
	}
	viewR struct {
		*View
		recycling
	}
	viewLT struct {
		*View
		looking
		together
	}
	viewLR struct {
		*View
		looking
		recycling
	}
	viewTR struct {
		*View
		together
		recycling
	}
	viewLTR struct {
		*View
		looking
		together
		recycling
	}
)

// shape returns v with the optional interfaces of its shared driver.
func shape(v *View) contract.Driver {
	l, t, r := looking{v}, together{v}, recycling{v}
	switch {
	case v.looker != nil && v.together != nil && v.recycler != nil:
		return &viewLTR{v, l, t, r}
	case v.looker != nil && v.together != nil:
		return &viewLT{v, l, t}
	case v.looker != nil && v.recycler != nil:
		return &viewLR{v, l, r}
	case v.together != nil && v.recycler != nil:
		return &viewTR{v, t, r}
	case v.looker != nil:
		return &viewL{v, l}
	case v.together != nil:
		return &viewT{v, t}
	case v.recycler != nil:
		return &viewR{v, r}
	}
	return v
}
