package rowbatch

import "github.com/kvshare/kvshare/contract"

// Regions is a driver's registry of the regions it registered: the
// handles it issued, and the live list a [Checker] checks each batch
// against. The zero value is empty and ready. It is not safe for
// concurrent use: the driver guards it with its own lock.
type Regions struct {
	byReg map[contract.Registration]contract.SlotRegion
	live  []contract.SlotRegion
	gen   uint64
	last  contract.Registration
}

// Add issues the next handle (never zero) for r and makes r live.
func (rs *Regions) Add(r contract.SlotRegion) contract.Registration {
	if rs.byReg == nil {
		rs.byReg = make(map[contract.Registration]contract.SlotRegion)
	}
	rs.last++
	rs.byReg[rs.last] = r
	rs.rebuild()
	return rs.last
}

// Get returns the live region of a handle, and whether it is live.
func (rs *Regions) Get(reg contract.Registration) (contract.SlotRegion, bool) {
	r, ok := rs.byReg[reg]
	return r, ok
}

// Revoked reports whether reg was issued and is no longer live.
func (rs *Regions) Revoked(reg contract.Registration) bool {
	_, live := rs.byReg[reg]
	return !live && reg != 0 && reg <= rs.last
}

// Remove takes a handle's region out of the live list; a handle not live
// is left alone. Put back with [Regions.Restore].
func (rs *Regions) Remove(reg contract.Registration) {
	if _, ok := rs.byReg[reg]; ok {
		delete(rs.byReg, reg)
		rs.rebuild()
	}
}

// Restore makes a removed handle's region live again (the store refused
// to let it go).
func (rs *Regions) Restore(reg contract.Registration, r contract.SlotRegion) {
	if rs.byReg == nil {
		rs.byReg = make(map[contract.Registration]contract.SlotRegion)
	}
	rs.byReg[reg] = r
	rs.rebuild()
}

// Live is the regions live now, for [Checker.Check]. The slice is
// replaced, never changed, when the registry changes, so a caller may
// keep it past the lock.
func (rs *Regions) Live() []contract.SlotRegion { return rs.live }

// Gen counts the registry's changes: a batch checked against the live
// list of one generation need not be checked again while it holds.
func (rs *Regions) Gen() uint64 { return rs.gen }

// Len is the number of live regions.
func (rs *Regions) Len() int { return len(rs.byReg) }

func (rs *Regions) rebuild() {
	live := make([]contract.SlotRegion, 0, len(rs.byReg))
	for _, r := range rs.byReg {
		live = append(live, r)
	}
	rs.live = live
	rs.gen++
}

// FirstRowIn returns the first row of b with a span overlapping r, or
// -1: what a driver asks before it lets a region go that an operation
// may still touch.
func FirstRowIn(b contract.RowBatch, r contract.SlotRegion) int {
	lo, hi := r.Base, r.Base+uintptr(r.Len)
	for i, row := range b.Rows {
		for _, s := range row.Spans {
			if s.Addr < hi && s.End() > lo {
				return i
			}
		}
	}
	return -1
}
