package contract

import (
	"fmt"
	"math"
)

// MemoryKind says where a region's memory lives. The zero value is not a
// kind: a region must say what it is, because the binding decides from it
// whether a driver can reach the memory at all.
type MemoryKind uint8

const (
	// Host is ordinary or pinned host memory outside the Go heap.
	Host MemoryKind = iota + 1
	// Device is accelerator memory. Only drivers that declare
	// [Capabilities.DeviceMemory] may register it.
	Device
)

// String returns "host", "device" or "MemoryKind(n)".
func (k MemoryKind) String() string {
	switch k {
	case Host:
		return "host"
	case Device:
		return "device"
	}
	return fmt.Sprintf("MemoryKind(%d)", uint8(k))
}

// SlotRegion is one block of memory a lender lends: SlotCount slots of
// SlotBytes each, starting at Base. Len is the size of the whole block and
// may exceed SlotBytes*SlotCount (padding the lender keeps).
//
// The memory behind Base lives outside the Go heap (mmap, cudaHostAlloc, C
// allocations): drivers hand its addresses to native code, which the Go
// garbage collector must never move or free. The lender keeps it alive
// while the region is lent; kvshare never frees it.
type SlotRegion struct {
	Base      uintptr
	SlotBytes int64
	SlotCount int
	Len       int64
	Kind      MemoryKind
}

// Validate reports whether the geometry is usable: a non-zero Base, a known
// Kind, SlotBytes > 0, SlotCount > 0, Len >= SlotBytes*SlotCount, and an
// address range that does not wrap. The error wraps [ErrInvalidRegion] and
// names the field at fault.
func (r SlotRegion) Validate() error {
	switch {
	case r.Base == 0:
		return fmt.Errorf("%w: Base is 0", ErrInvalidRegion)
	case r.Kind != Host && r.Kind != Device:
		return fmt.Errorf("%w: Kind is %v, want host or device", ErrInvalidRegion, r.Kind)
	case r.SlotBytes <= 0:
		return fmt.Errorf("%w: SlotBytes is %d, want > 0", ErrInvalidRegion, r.SlotBytes)
	case r.SlotCount <= 0:
		return fmt.Errorf("%w: SlotCount is %d, want > 0", ErrInvalidRegion, r.SlotCount)
	case r.SlotBytes > math.MaxInt64/int64(r.SlotCount):
		return fmt.Errorf("%w: SlotBytes*SlotCount overflows (%d*%d)", ErrInvalidRegion, r.SlotBytes, r.SlotCount)
	case r.Len < r.SlotBytes*int64(r.SlotCount):
		return fmt.Errorf("%w: Len is %d, want >= SlotBytes*SlotCount = %d", ErrInvalidRegion, r.Len, r.SlotBytes*int64(r.SlotCount))
	case uint64(r.Len) > math.MaxUint64-uint64(r.Base):
		return fmt.Errorf("%w: Base+Len wraps the address space", ErrInvalidRegion)
	}
	return nil
}

// Slot returns the span of slot i. It does not check i; callers validate
// the slot against SlotCount first.
func (r SlotRegion) Slot(i int) Span {
	return Span{Addr: r.Base + uintptr(int64(i)*r.SlotBytes), Len: r.SlotBytes}
}

// Contains reports whether s lies wholly inside [Base, Base+Len).
func (r SlotRegion) Contains(s Span) bool {
	if s.Len < 0 || s.Addr < r.Base {
		return false
	}
	off := uint64(s.Addr - r.Base)
	return off <= uint64(r.Len) && uint64(s.Len) <= uint64(r.Len)-off
}

// RegionSpec is one region of a [RegionsTogether.RegisterRegions] batch:
// the region and a label that errors and logs use to name it.
type RegionSpec struct {
	Label  string
	Region SlotRegion
}

// Validate checks the region's geometry; the error names the label.
func (s RegionSpec) Validate() error {
	if err := s.Region.Validate(); err != nil {
		return fmt.Errorf("region %q: %w", s.Label, err)
	}
	return nil
}
