package hostmem

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/kvshare/kvshare/contract"
)

// Memory is one mapping of host memory laid out as regions of slots, and
// the hold those regions are lent under. Its methods are safe for
// concurrent use.
type Memory struct {
	mem       []byte // the whole mapping
	regionLen int64
	regions   []contract.SlotRegion
	report    Report

	mu       sync.Mutex
	released bool  // the hold was released
	keptBy   error // the hold is kept for good, and why
	freed    bool
}

// Regions describes the memory as regions of the geometry's slots, in
// order, each Host memory.
func (m *Memory) Regions() []contract.SlotRegion {
	out := make([]contract.SlotRegion, len(m.regions))
	copy(out, m.regions)
	return out
}

// Slot returns the bytes of one slot of one region. It panics for a slot
// or region out of range, and after Free.
func (m *Memory) Slot(region, slot int) []byte {
	r := m.regions[region]
	if slot < 0 || slot >= r.SlotCount {
		panic(fmt.Sprintf("hostmem: slot %d out of range [0, %d)", slot, r.SlotCount))
	}
	m.mu.Lock()
	freed := m.freed
	m.mu.Unlock()
	if freed {
		panic("hostmem: slot of freed memory")
	}
	off := int64(region)*m.regionLen + int64(slot)*r.SlotBytes
	return m.mem[off : off+r.SlotBytes : off+r.SlotBytes]
}

// Bytes returns the bytes of one region: its slots, then the padding to
// its last page. It panics for a region out of range, and after Free.
func (m *Memory) Bytes(region int) []byte {
	_ = m.regions[region]
	m.mu.Lock()
	freed := m.freed
	m.mu.Unlock()
	if freed {
		panic("hostmem: bytes of freed memory")
	}
	off := int64(region) * m.regionLen
	return m.mem[off : off+m.regionLen : off+m.regionLen]
}

// Report says what was asked of the mapping and what it got.
func (m *Memory) Report() Report { return m.report }

// Release is the hold's release: binding calls it once no store can
// touch the memory any more. Until then Free is refused.
func (m *Memory) Release() {
	m.mu.Lock()
	m.released = true
	m.mu.Unlock()
}

// Released reports whether the hold was released.
func (m *Memory) Released() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.released
}

// KeepForGood marks the hold as kept for good, with why (the error
// binding's Close answered, matching ErrHeldForGood): Free is refused
// from now on, whatever happens, naming why. The memory stays mapped for
// the life of the process.
func (m *Memory) KeepForGood(why error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if why == nil {
		why = fmt.Errorf("kept for good")
	}
	m.keptBy = why
}

// Free unmaps the memory once its hold was released. It is refused with
// an error wrapping [ErrLent], unmapping nothing, while the hold is held
// (a store may still touch the memory) and for good after KeepForGood.
// Freeing freed memory does nothing.
func (m *Memory) Free() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.freed:
		return nil
	case m.keptBy != nil:
		return fmt.Errorf("%w: the hold is kept for good (%v): %d bytes stay mapped", ErrLent, m.keptBy, len(m.mem))
	case !m.released:
		return fmt.Errorf("%w: the hold is not released: a store may still touch these %d bytes", ErrLent, len(m.mem))
	}
	if err := unmap(m.mem); err != nil {
		return fmt.Errorf("hostmem: munmap: %w", err)
	}
	m.freed = true
	totals.freedOne(int64(len(m.mem)), m.report.Locked)
	return nil
}

// base is the address of b's first byte.
func base(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
