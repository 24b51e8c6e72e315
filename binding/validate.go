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
		for ri, s := range g.Slots {
			if s < 0 || int(s) >= region.SlotCount {
				return 0, invalid(gi, ri, "slot %d out of range [0, %d) of region %d", s, region.SlotCount, g.Region)
			}
		}
		for ri, name := range g.Names {
			if n := len(name); n == 0 || n > keys.MaxNameBytes {
				return 0, invalid(gi, ri, "name of %d bytes, want 1 to %d", n, keys.MaxNameBytes)
			}
			nameBytes += len(name)
		}
	}
	if dir == fetch {
		return nameBytes, b.slots.distinct(v)
	}
	return nameBytes, nil
}

// maxSlotBits bounds the pooled bit sets (2 MiB each); a binding with
// more slots checks a fetch with a map instead.
const maxSlotBits = 1 << 24

// slotSets finds a slot that two rows of one fetch would both write. Each
// served slot of the binding has one bit; sets are pooled and cleared
// after use, so a check costs a few nanoseconds a row.
type slotSets struct {
	base []int // first bit of each region; -1 for unserved ones
	bits int
	pool sync.Pool
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
	words := (s.bits + 63) / 64
	s.pool.New = func() any {
		w := make([]uint64, words)
		return &w
	}
}

// distinct reports the first row of a (validated) view whose slot an
// earlier row already names.
func (s *slotSets) distinct(v contract.View) error {
	if s.pool.New == nil {
		return s.distinctByMap(v)
	}
	set := s.pool.Get().(*[]uint64)
	defer s.pool.Put(set)
	w := *set
	var err error
	gi, ri := 0, 0
mark:
	for gi = range v.Groups {
		g := &v.Groups[gi]
		base := s.base[g.Region]
		for ri = range g.Slots {
			bit := base + int(g.Slots[ri])
			if w[bit/64]&(1<<(bit%64)) != 0 {
				err = s.repeated(v, gi, ri)
				break mark
			}
			w[bit/64] |= 1 << (bit % 64)
		}
		ri = len(g.Slots)
	}
	// Clear what was marked: every row before (gi, ri).
	for gj := 0; gj <= gi && gj < len(v.Groups); gj++ {
		g := &v.Groups[gj]
		base := s.base[g.Region]
		end := len(g.Slots)
		if gj == gi {
			end = ri
		}
		for _, slot := range g.Slots[:end] {
			bit := base + int(slot)
			w[bit/64] &^= 1 << (bit % 64)
		}
	}
	return err
}

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
