package binding

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/kvshare/kvshare/contract"
)

// Hold is the lender's hold on the memory it lends: while it is held, the
// lender keeps every region's memory alive. The binding calls Release at
// most once, and only when no store can touch the memory any more.
type Hold interface {
	Release()
}

// Regions is the region binding: the lender's regions registered with one
// driver under the lender's hold. It keeps each region's index in the
// list it was built from; regions whose memory the driver cannot reach
// are kept too, unserved, so that a view naming them is refused rather
// than renumbered.
//
// A Regions is safe for concurrent use. Once a [Backend] is built over it
// the backend owns it: [Regions.Unbind] is refused, and the owner shuts
// the backend down instead.
type Regions struct {
	drv     contract.Driver
	caps    contract.Capabilities
	regions []contract.SlotRegion // every region offered, by index
	served  []bool
	hold    Hold

	unbindTurn turn // one unbind at a time; each waits within its own context

	mu        sync.Mutex
	regs      []*registration // in registration order
	releasing bool            // Release was called
	released  bool            // Release returned
	owned     bool            // a Backend owns the binding
	unbinding bool            // the owner called Unbind: no Backend may own it
}

// registration is one driver handle and the regions it covers: one region
// from Register, every served region from RegisterRegions.
type registration struct {
	indices  []int
	handle   contract.Registration
	together bool
	noHandle bool // may be live, but the driver gave no handle to revoke
	revoked  bool // confirmed: the store never touches these regions again
}

// Bind registers with d the regions whose memory d can reach (Host
// always; Device only when d declares DeviceMemory), under hold, which the
// caller took before calling. Regions keep their indices in the list.
//
// Every region's geometry is checked first. A bad region, no region d can
// reach, or a registration failure that escaped nothing (an error wrapping
// [contract.ErrDriverRejected], or a [*contract.RegistrationError] without
// a handle) roll back whatever was registered, release the hold and
// return an error wrapping [contract.ErrConstructionRejected].
//
// A failure that may have left a registration live (a
// [*contract.RegistrationError] with a handle, any other error, a panic,
// or a rollback the driver refused) keeps the hold and returns a
// [*LiveRegistrationError] wrapping [ErrRegistrationMayBeLive], which
// names what is held and can revoke it later.
//
// When d implements [contract.RegionsTogether], every served region is
// registered as one batch (labels "region <index>"); otherwise one region
// at a time, in index order.
func Bind(d contract.Driver, regions []contract.SlotRegion, hold Hold) (*Regions, error) {
	if hold == nil {
		return nil, fmt.Errorf("%w: no hold", contract.ErrConstructionRejected)
	}
	if d == nil {
		hold.Release()
		return nil, fmt.Errorf("%w: no driver", contract.ErrConstructionRejected)
	}
	caps, err := capabilitiesOf(d)
	if err != nil {
		hold.Release()
		return nil, fmt.Errorf("%w: %w", contract.ErrConstructionRejected, err)
	}
	r := &Regions{
		drv:     d,
		caps:    caps,
		regions: slices.Clone(regions),
		served:  make([]bool, len(regions)),
		hold:    hold,

		unbindTurn: newTurn(),
	}
	empty := 0
	for i, reg := range regions {
		err := reg.Validate()
		if reg.SlotCount == 0 {
			err = validateNoSlots(reg)
			empty++
		}
		if err != nil {
			hold.Release()
			return nil, fmt.Errorf("%w: region %d: %w", contract.ErrConstructionRejected, i, err)
		}
	}
	var serve []int
	for i, reg := range regions {
		if reg.SlotCount > 0 && (reg.Kind == contract.Host || (reg.Kind == contract.Device && caps.DeviceMemory)) {
			r.served[i] = true
			serve = append(serve, i)
		}
	}
	if len(serve) == 0 {
		hold.Release()
		return nil, fmt.Errorf("%w: none of %d regions is memory the driver can reach (device memory: %v; regions with no slots: %d)",
			contract.ErrConstructionRejected, len(regions), caps.DeviceMemory, empty)
	}
	if rt, ok := d.(contract.RegionsTogether); ok {
		return r.bindTogether(rt, serve)
	}
	return r.bindEach(serve)
}

// bindEach registers the served regions one at a time.
func (r *Regions) bindEach(serve []int) (*Regions, error) {
	for _, i := range serve {
		h, err := registerOne(r.drv, r.regions[i])
		if err == nil && h != 0 {
			r.regs = append(r.regs, &registration{indices: []int{i}, handle: h})
			continue
		}
		if err == nil {
			err = errors.New("registration 0 and no error from Register")
		}
		return r.fail(failedRegistrations([]int{i}, false, h, err), fmt.Errorf("region %d: %w", i, err))
	}
	return r, nil
}

// bindTogether registers the served regions as one batch.
func (r *Regions) bindTogether(rt contract.RegionsTogether, serve []int) (*Regions, error) {
	specs := make([]contract.RegionSpec, len(serve))
	for k, i := range serve {
		specs[k] = contract.RegionSpec{Label: regionLabel(i), Region: r.regions[i]}
	}
	h, err := registerTogether(rt, specs)
	if err == nil && h != 0 {
		r.regs = append(r.regs, &registration{indices: serve, handle: h, together: true})
		return r, nil
	}
	if err == nil {
		err = errors.New("registration 0 and no error from RegisterRegions")
	}
	return r.fail(failedRegistrations(serve, true, h, err), fmt.Errorf("regions %v together: %w", serve, err))
}

// failedRegistrations returns what a failed registration of the regions
// at indices may have left live, for [Regions.fail]: the handle the
// driver returned next to its error and the handle a
// [*contract.RegistrationError] carries, whatever the error wraps (a
// handle given back is a registration that may be live); with neither,
// nothing if the error certifies that nothing escaped, else a
// registration with no handle to revoke.
func failedRegistrations(indices []int, together bool, returned contract.Registration, err error) []*registration {
	var handles []contract.Registration
	if returned != 0 {
		handles = append(handles, returned)
	}
	var re *contract.RegistrationError
	if errors.As(err, &re) && re.MayBeLive() && re.Registration != returned {
		handles = append(handles, re.Registration)
	}
	var out []*registration
	for _, h := range handles {
		out = append(out, &registration{indices: indices, together: together, handle: h})
	}
	if len(out) == 0 && !escapedNothing(err) {
		out = append(out, &registration{indices: indices, together: together, noHandle: true})
	}
	return out
}

// fail handles a failed registration: it rolls back what registered
// cleanly, once each, then releases the hold if nothing can be live, or
// keeps it and says what is held.
func (r *Regions) fail(failed []*registration, err error) (*Regions, error) {
	for _, reg := range slices.Backward(r.regs) {
		if unregister(r.drv, reg) == nil {
			reg.revoked = true
		}
	}
	r.regs = append(r.regs, failed...)
	if held := r.Held(); len(held) > 0 {
		return nil, &LiveRegistrationError{Held: held, Err: err, regions: r}
	}
	r.releaseHold()
	return nil, fmt.Errorf("%w: %w", contract.ErrConstructionRejected, err)
}

// escapedNothing reports whether a registration error certifies that
// nothing was registered.
func escapedNothing(err error) bool {
	var re *contract.RegistrationError
	if errors.As(err, &re) {
		return !re.MayBeLive()
	}
	return errors.Is(err, contract.ErrDriverRejected)
}

// validateNoSlots checks a region with no slots as Validate checks every
// other field: a region the binding skips must still be a region.
func validateNoSlots(r contract.SlotRegion) error {
	switch {
	case r.Base == 0:
		return fmt.Errorf("%w: Base is 0", contract.ErrInvalidRegion)
	case r.Kind != contract.Host && r.Kind != contract.Device:
		return fmt.Errorf("%w: Kind is %v, want host or device", contract.ErrInvalidRegion, r.Kind)
	case r.SlotBytes <= 0:
		return fmt.Errorf("%w: SlotBytes is %d, want > 0", contract.ErrInvalidRegion, r.SlotBytes)
	case r.Len < 0:
		return fmt.Errorf("%w: Len is %d, want >= 0", contract.ErrInvalidRegion, r.Len)
	case uint64(r.Len) > math.MaxUint64-uint64(r.Base):
		return fmt.Errorf("%w: Base+Len wraps the address space", contract.ErrInvalidRegion)
	}
	return nil
}

// Served reports whether region index is registered and may appear in a
// view.
func (r *Regions) Served(index int) bool {
	return index >= 0 && index < len(r.served) && r.served[index]
}

// Region returns region index as the lender gave it, and whether it is
// served. An index out of range gives the zero region and false.
func (r *Regions) Region(index int) (contract.SlotRegion, bool) {
	if index < 0 || index >= len(r.regions) {
		return contract.SlotRegion{}, false
	}
	return r.regions[index], r.served[index]
}

// Len returns the number of regions the lender gave, served or not.
func (r *Regions) Len() int { return len(r.regions) }

// Driver returns the driver the regions are registered with.
func (r *Regions) Driver() contract.Driver { return r.drv }

// Capabilities returns the driver's capabilities, as read once by Bind.
func (r *Regions) Capabilities() contract.Capabilities { return r.caps }

// Held returns the labels ("region <index>") of the regions whose
// registration is not yet confirmed revoked, in index order; empty once
// everything is revoked. A region registered without a handle to revoke
// reads "region <index> (no handle)".
func (r *Regions) Held() []string {
	type heldRegion struct {
		index    int
		noHandle bool
	}
	var regions []heldRegion
	r.mu.Lock()
	for _, reg := range r.regs {
		if !reg.revoked {
			for _, i := range reg.indices {
				regions = append(regions, heldRegion{i, reg.noHandle})
			}
		}
	}
	r.mu.Unlock()
	slices.SortFunc(regions, func(a, b heldRegion) int {
		return cmp.Or(cmp.Compare(a.index, b.index), cmp.Compare(btoi(a.noHandle), btoi(b.noHandle)))
	})
	// A region two live handles cover is named once.
	regions = slices.CompactFunc(regions, func(a, b heldRegion) bool { return a.index == b.index })
	var held []string
	for _, h := range regions {
		l := regionLabel(h.index)
		if h.noHandle {
			l += " (no handle)"
		}
		held = append(held, l)
	}
	return held
}

// Released reports whether the binding released the hold: its Release
// was called and has returned.
func (r *Regions) Released() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.released
}

// releaseHold calls the hold's Release, once; Released reports true only
// after it returned.
func (r *Regions) releaseHold() {
	r.mu.Lock()
	if r.releasing {
		r.mu.Unlock()
		return
	}
	r.releasing = true
	r.mu.Unlock()
	r.hold.Release()
	r.mu.Lock()
	r.released = true
	r.mu.Unlock()
}

func regionLabel(i int) string { return fmt.Sprintf("region %d", i) }

// The driver calls below recover a panic into an error: a driver that
// panics broke the protocol, and the binding must still account for
// what may be live.

func capabilitiesOf(d contract.Driver) (c contract.Capabilities, err error) {
	defer recoverInto(&err, "Capabilities")
	return d.Capabilities(), nil
}

func registerOne(d contract.Driver, reg contract.SlotRegion) (h contract.Registration, err error) {
	defer recoverInto(&err, "Register")
	return d.Register(reg)
}

func registerTogether(rt contract.RegionsTogether, specs []contract.RegionSpec) (h contract.Registration, err error) {
	defer recoverInto(&err, "RegisterRegions")
	return rt.RegisterRegions(specs)
}

// unregister revokes one registration; nil only when the driver confirmed
// it.
func unregister(d contract.Driver, reg *registration) (err error) {
	defer recoverInto(&err, "Unregister")
	if reg.noHandle {
		return errors.New("no handle to revoke")
	}
	if reg.together {
		rt, ok := d.(contract.RegionsTogether)
		if !ok {
			return errors.New("driver no longer implements RegionsTogether")
		}
		return rt.UnregisterRegions(reg.handle)
	}
	return d.Unregister(reg.handle)
}

func recoverInto(err *error, method string) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("%s panicked: %v", method, p)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
