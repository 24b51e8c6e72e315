package binding

import (
	"sync"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
)

// validate checks a whole submission before anything reaches the driver,
// and returns the bytes the view's names take. The error is a
// [*SubmissionError] naming the group and row at fault.
func (b *Backend) validate(dir direction, v contract.View, h contract.Hint, d contract.Destination) (nameBytes int, err error) {
	switch dir {
	case fetch:
		if !b.caps.Get {
			return 0, invalid(-1, -1, "fetch: the driver serves no gets")
		}
		if h != nil && !b.caps.Hints {
			return 0, invalid(-1, -1, "fetch hint of type %T given; the driver takes no hints", h)
		}
	case publish:
		if !b.caps.Put {
			return 0, invalid(-1, -1, "publish: the driver serves no puts")
		}
		if d != nil {
			return 0, invalid(-1, -1, "publish destination of type %T given; it must be nil", d)
		}
	}
	// One pass over the rows: a fetch's repeated slots are found in the
	// same pass as bad slots and names, from a pooled table of stamps.
	var seen []uint32
	var stamp uint32
	if dir == fetch {
		t := b.slots.take()
		if t != nil {
			defer b.slots.give(t)
			seen, stamp = t.seen, t.stamp
		}
	}
	for gi := range v.Groups {
		g := &v.Groups[gi]
		region, served := b.regions.Region(g.Region)
		switch {
		case g.Region < 0 || g.Region >= b.regions.Len():
			return 0, invalid(gi, -1, "region %d out of range: the binding has %d regions", g.Region, b.regions.Len())
		case !served && region.SlotCount == 0:
			return 0, invalid(gi, -1, "region %d has no slots", g.Region)
		case !served:
			return 0, invalid(gi, -1, "region %d is %v memory, which the driver cannot reach", g.Region, region.Kind)
		case len(g.Slots) != len(g.Names):
			return 0, invalid(gi, -1, "%d slots but %d names", len(g.Slots), len(g.Names))
		}
		names := g.Names[:len(g.Slots)]
		count := uint(region.SlotCount)
		base := b.slots.base[g.Region]
		for ri, slot := range g.Slots {
			if uint(int(slot)) >= count { // a negative slot is huge as a uint
				return 0, invalid(gi, ri, "slot %d out of range [0, %d) of region %d", slot, region.SlotCount, g.Region)
			}
			n := len(names[ri])
			if uint(n-1) >= keys.MaxNameBytes { // 0 wraps to the largest uint
				return 0, invalid(gi, ri, "name of %d bytes, want 1 to %d", n, keys.MaxNameBytes)
			}
			nameBytes += n
			if seen != nil {
				e := &seen[base+int(slot)]
				if *e == stamp {
					return 0, b.slots.repeated(v, gi, ri)
				}
				*e = stamp
			}
		}
	}
	if dir == fetch && seen == nil {
		return nameBytes, b.slots.distinctByMap(v) // a binding too large for stamps
	}
	return nameBytes, nil
}

// maxSlotBits bounds the pooled stamp tables (64 MiB each); a binding
// with more slots checks a fetch with a map instead.
const maxSlotBits = 1 << 24

// slotSets finds a slot that two rows of one fetch would both write.
// Each served slot of the binding has one entry in a pooled table of
// stamps: a row marks its slot with the check's stamp, and a slot that
// already carries it repeats. A new stamp per check clears the table,
// so a check costs one load and one store a row.
type slotSets struct {
	base []int // first entry of each region; -1 for unserved ones
	bits int
	pool sync.Pool
}

// stamps is one pooled table: stamp is the value the last check wrote.
type stamps struct {
	stamp uint32
	seen  []uint32
}

func (s *slotSets) init(r *Regions) {
	s.base = make([]int, r.Len())
	for i := range s.base {
		reg, served := r.Region(i)
		if !served {
			s.base[i] = -1
			continue
		}
		s.base[i] = s.bits
		s.bits += reg.SlotCount
	}
	if s.bits > maxSlotBits {
		return // distinct uses a map per fetch
	}
	n := s.bits
	s.pool.New = func() any { return &stamps{seen: make([]uint32, n)} }
}

// take returns a stamp table with a fresh stamp, or nil when the binding
// is too large for tables (then distinctByMap checks a fetch).
func (s *slotSets) take() *stamps {
	if s.pool.New == nil {
		return nil
	}
	t := s.pool.Get().(*stamps)
	t.stamp++
	if t.stamp == 0 { // wrapped: entries of 2^32 checks ago would match
		clear(t.seen)
		t.stamp = 1
	}
	return t
}

// give returns a table taken with take.
func (s *slotSets) give(t *stamps) { s.pool.Put(t) }

// distinctByMap is distinct for a binding too large for bit sets.
func (s *slotSets) distinctByMap(v contract.View) error {
	seen := make(map[int]struct{}, v.Rows())
	for gi, g := range v.Groups {
		base := s.base[g.Region]
		for ri, slot := range g.Slots {
			bit := base + int(slot)
			if _, dup := seen[bit]; dup {
				return s.repeated(v, gi, ri)
			}
			seen[bit] = struct{}{}
		}
	}
	return nil
}

// repeated builds the error for row ri of group gi, naming the earlier row
// with the same slot.
func (s *slotSets) repeated(v contract.View, gi, ri int) error {
	g := v.Groups[gi]
	for gj := 0; gj <= gi; gj++ {
		h := v.Groups[gj]
		if h.Region != g.Region {
			continue
		}
		for rj, slot := range h.Slots {
			if gj == gi && rj == ri {
				break
			}
			if slot == g.Slots[ri] {
				return invalid(gi, ri, "slot %d of region %d is already fetched into by group %d row %d", slot, g.Region, gj, rj)
			}
		}
	}
	return invalid(gi, ri, "slot %d of region %d repeats", g.Slots[ri], g.Region)
}
