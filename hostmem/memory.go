package hostmem

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/kvshare/kvshare/contract"
)

// Memory is one mapping of host memory laid out as regions of slots.
// Each loan of it takes a [Hold] of its own ([Memory.Hold]), and Free is
// refused while any hold taken is unreleased or kept for good. Its
// methods are safe for concurrent use.
type Memory struct {
	mem       []byte // the whole mapping
	regionLen int64
	regions   []contract.SlotRegion
	report    Report

	mu    sync.Mutex
	holds holdCount
	freed bool
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

// Free unmaps the memory. It is refused with an error wrapping
// [ErrLent], unmapping nothing, while any hold taken with [Memory.Hold]
// is not released (a store may still touch the memory), and for good
// once any is kept for good ([Hold.KeepForGood]); the error counts them
// and says why. Memory never lent (no hold taken) is freed at once.
// Freeing freed memory does nothing.
func (m *Memory) Free() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.freed {
		return nil
	}
	if err := m.holds.refusal(int64(len(m.mem))); err != nil {
		return err
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
