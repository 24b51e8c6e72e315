package driverview

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/kvshare/kvshare/contract"
)

// registration is a handle the shared driver issued through the view,
// kept after it is revoked so that revoking it again passes through.
type registration struct {
	regions []contract.SlotRegion
	batch   bool // from RegisterRegions
	live    bool // not revoked (a registration that failed and may be live counts)
}

// Register registers r with the shared driver and counts the handle as
// the view's. After Drain or Close, or while the view's Recycle runs, it
// is refused with an error wrapping [contract.ErrDriverRejected]. A
// [*contract.RegistrationError] carrying a handle counts that handle as
// the view's too (it may be live), so that the view's Unregister takes it.
func (v *View) Register(r contract.SlotRegion) (contract.Registration, error) {
	return v.register("register", false, []contract.SlotRegion{r}, func() (contract.Registration, error) {
		return v.shared.Register(r)
	})
}

// registerRegions is RegionsTogether's RegisterRegions through the view.
func (v *View) registerRegions(specs []contract.RegionSpec) (contract.Registration, error) {
	rs := make([]contract.SlotRegion, len(specs))
	for i, s := range specs {
		rs[i] = s.Region
	}
	return v.register("register regions", true, rs, func() (contract.Registration, error) {
		return v.together.RegisterRegions(specs)
	})
}

func (v *View) register(verb string, batch bool, rs []contract.SlotRegion, call func() (contract.Registration, error)) (contract.Registration, error) {
	v.mu.Lock()
	if err := v.usableLocked(verb); err != nil {
		v.mu.Unlock()
		return 0, err
	}
	v.registering++
	v.mu.Unlock()

	returned := false
	defer func() {
		if !returned { // the shared driver panicked: a registration may be live, unknown
			v.mu.Lock()
			v.registering--
			v.breakLocked(verb + " panicked in the shared driver")
			v.mu.Unlock()
		}
	}()
	h, err := call()
	returned = true

	live := h
	var re *contract.RegistrationError
	if err != nil && errors.As(err, &re) && re.Registration != 0 {
		live = re.Registration
	}
	v.mu.Lock()
	v.registering--
	if h == 0 && err == nil { // a registration that may be live, with no handle to revoke it by
		v.breakLocked(verb + ": the shared driver returned no handle and no error")
	}
	if live != 0 {
		v.regs[live] = &registration{regions: slices.Clone(rs), batch: batch, live: true}
		v.reindexLocked()
	}
	if h != 0 && live != h { // a handle beside an error that carries another: both may be live
		v.regs[h] = &registration{regions: slices.Clone(rs), batch: batch, live: true}
		v.reindexLocked()
	}
	v.broadcastLocked()
	v.mu.Unlock()
	return h, err
}

// Unregister revokes a registration made through the view, passing the
// shared driver's answer through. A handle the view never issued (one
// of another view's, say) is refused with an error wrapping
// [contract.ErrDriverRejected] and the shared driver is not asked. While
// the view's Recycle runs it is refused too, as the contract says.
func (v *View) Unregister(reg contract.Registration) error {
	return v.unregister("unregister", reg, func() error { return v.shared.Unregister(reg) })
}

// unregisterRegions is RegionsTogether's UnregisterRegions through the
// view.
func (v *View) unregisterRegions(reg contract.Registration) error {
	return v.unregister("unregister regions", reg, func() error { return v.together.UnregisterRegions(reg) })
}

func (v *View) unregister(verb string, reg contract.Registration, call func() error) error {
	v.mu.Lock()
	_, ours := v.regs[reg]
	switch {
	case !ours:
		v.mu.Unlock()
		return fmt.Errorf("%w: driverview: %s: registration %d was not made through this view", contract.ErrDriverRejected, verb, reg)
	case v.recycling > 0:
		v.mu.Unlock()
		return fmt.Errorf("%w: driverview: %s: the view is recycling the store client", contract.ErrDriverRejected, verb)
	}
	v.mu.Unlock()
	err := call()
	if err != nil {
		return err
	}
	v.mu.Lock()
	if r := v.regs[reg]; r.live {
		r.live = false
		v.reindexLocked()
	}
	v.broadcastLocked()
	v.mu.Unlock()
	return nil
}

// liveLocked counts the registrations not revoked.
func (v *View) liveLocked() int {
	n := 0
	for _, r := range v.regs {
		if r.live {
			n++
		}
	}
	return n
}

// reindexLocked rebuilds the index of the live registrations' regions,
// in a fresh value, so that a check under way keeps the one it read.
func (v *View) reindexLocked() {
	var rs []contract.SlotRegion
	for _, r := range v.regs {
		if r.live {
			rs = append(rs, r.regions...)
		}
	}
	v.index = newRegionIndex(rs)
}

// regionIndex finds the region holding a span among a view's live
// regions: sorted by base, with the highest end among each prefix, so
// that overlapping regions are found too.
type regionIndex struct {
	rs     []contract.SlotRegion
	maxEnd []uint64 // maxEnd[i]: the highest Base+Len among rs[:i+1]
}

func newRegionIndex(rs []contract.SlotRegion) *regionIndex {
	slices.SortFunc(rs, func(a, b contract.SlotRegion) int {
		switch {
		case a.Base < b.Base:
			return -1
		case a.Base > b.Base:
			return 1
		}
		return 0
	})
	x := &regionIndex{rs: rs, maxEnd: make([]uint64, len(rs))}
	var top uint64
	for i, r := range rs {
		top = max(top, uint64(r.Base)+uint64(r.Len))
		x.maxEnd[i] = top
	}
	return x
}

// holds reports whether a region of the index holds s whole.
func (x *regionIndex) holds(s contract.Span) bool {
	i := sort.Search(len(x.rs), func(i int) bool { return x.rs[i].Base > s.Addr }) - 1
	for ; i >= 0 && x.maxEnd[i] > uint64(s.Addr); i-- {
		if x.rs[i].Contains(s) {
			return true
		}
	}
	return false
}

// check refuses a batch with a span outside every region registered
// through the view: another lend's memory, say, which the shared driver
// would take. Everything else about the batch is the shared driver's to
// check.
func (x *regionIndex) check(verb string, b contract.RowBatch) error {
	for i, r := range b.Rows {
		for j, s := range r.Spans {
			if s.Len > 0 && !x.holds(s) {
				return fmt.Errorf("%w: driverview: %s: row %d span %d (%#x, %d bytes) lies in no region registered through this view",
					contract.ErrDriverRejected, verb, i, j, s.Addr, s.Len)
			}
		}
	}
	return nil
}
