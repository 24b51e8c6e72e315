package memdrv

import (
	"errors"
	"fmt"
	"math"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
)

// Memory is a block of memory outside the Go heap, laid out as the slots
// of one region: what a lender lends. Tests and the main job allocate it
// with [Alloc] and hand Region to a driver's Register.
//
// Region.Base is the address of the mapping and Region.Len its length:
// SlotBytes*SlotCount rounded up to a whole number of pages, so the bytes
// past the last slot (if any) are padding that belongs to the region but
// to no slot. Bytes views the whole mapping.
//
// While a memdrv driver holds a registration covering the memory, Free
// refuses it (see [Memory.Free]).
type Memory struct {
	// Region describes the mapping as one region of SlotCount slots.
	Region contract.SlotRegion
	// Bytes views the whole mapping, Region.Len bytes. Free sets it to
	// nil.
	Bytes []byte

	mapping *hostmem.Memory // nil once unmapped (guarded by ledger.mu)
}

// Alloc maps slotBytes*slotCount bytes of anonymous, zeroed memory
// (rounded up to whole pages) outside the Go heap with package hostmem
// (never shared with a forked child), for a region of kind kind. A Device kind still maps host memory: it is a stand-in, labelled
// Device, for tests of code that must treat device memory differently.
//
// Bad geometry (a size or count that is not positive, an unknown kind, a
// size that overflows) is an error wrapping [contract.ErrInvalidRegion]
// that names the argument; a failed mmap is an error naming the size.
// The memory stays mapped until [Memory.Free].
func Alloc(slotBytes int64, slotCount int, kind contract.MemoryKind) (*Memory, error) {
	switch {
	case kind != contract.Host && kind != contract.Device:
		return nil, fmt.Errorf("%w: memdrv: alloc: kind is %v, want host or device", contract.ErrInvalidRegion, kind)
	case slotBytes <= 0:
		return nil, fmt.Errorf("%w: memdrv: alloc: slotBytes is %d, want > 0", contract.ErrInvalidRegion, slotBytes)
	case slotCount <= 0:
		return nil, fmt.Errorf("%w: memdrv: alloc: slotCount is %d, want > 0", contract.ErrInvalidRegion, slotCount)
	}
	if slotBytes > math.MaxInt/int64(slotCount) {
		return nil, fmt.Errorf("%w: memdrv: alloc: slotBytes*slotCount overflows (%d*%d)", contract.ErrInvalidRegion, slotBytes, slotCount)
	}
	host, err := hostmem.Map(hostmem.Geometry{SlotBytes: slotBytes, SlotCount: slotCount}, hostmem.Options{})
	if errors.Is(err, hostmem.ErrGeometry) {
		return nil, fmt.Errorf("%w: memdrv: alloc: %w", contract.ErrInvalidRegion, err)
	}
	if err != nil {
		return nil, fmt.Errorf("memdrv: alloc: map %d slots of %d bytes: %w", slotCount, slotBytes, err)
	}
	b := host.Bytes(0)
	r := host.Regions()[0]
	r.Len, r.Kind = int64(len(b)), kind
	m := &Memory{Region: r, Bytes: b, mapping: host}
	record(m)
	return m, nil
}

// Slot returns the bytes of slot i, a slice of Bytes whose capacity ends
// at the slot's end. It panics if i is not a slot of the region or the
// memory was freed, as indexing a slice out of range does. Like every
// use of the memory, it must not race with Free.
func (m *Memory) Slot(i int) []byte {
	if m.Bytes == nil {
		panic("memdrv: Slot of freed memory")
	}
	if i < 0 || i >= m.Region.SlotCount {
		panic(fmt.Sprintf("memdrv: slot %d out of range [0, %d)", i, m.Region.SlotCount))
	}
	sb := m.Region.SlotBytes
	off := int64(i) * sb
	return m.Bytes[off : off+sb : off+sb]
}

// Free unmaps the memory. Call it only once no driver can touch the
// region any more (its registration was revoked, or never made).
//
// While a registration of a memdrv driver in this process covers any
// byte of the memory (it was not revoked, or its Unregister failed
// because an operation was Open or Unprovable), Free refuses with an
// error wrapping [ErrMemoryLent] and the memory stays mapped: it is kept,
// not freed under a store's feet. memdrv sees only its own drivers'
// registrations; for any other driver the caller's proof is all there
// is.
//
// Free is idempotent and safe for concurrent use: the memory is unmapped
// once, and later calls return nil. If the unmap fails the memory stays
// mapped and Free may be called again.
func (m *Memory) Free() error {
	ledger.mu.Lock()
	defer ledger.mu.Unlock()
	if m.mapping == nil {
		return nil
	}
	if n := ledger.lent[m]; n > 0 {
		return fmt.Errorf("%w: memdrv: free %d bytes at %#x: %d memdrv registrations still cover it",
			ErrMemoryLent, len(m.Bytes), m.Region.Base, n)
	}
	// memdrv's own ledger is the proof that no registration covers it;
	// the mapping itself was never lent (no hold taken), so it frees.
	if err := m.mapping.Free(); err != nil {
		return fmt.Errorf("memdrv: free %d bytes at %#x: %w", len(m.Bytes), m.Region.Base, err)
	}
	delete(ledger.lent, m)
	m.mapping = nil
	m.Bytes = nil
	return nil
}
