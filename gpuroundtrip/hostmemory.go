package gpuroundtrip

import (
	"github.com/kvshare/kvshare/hostmem"
)

// mapMemory maps n bytes of zeroed host memory outside the Go heap
// (package hostmem: anonymous, never shared with a forked child).
func mapMemory(n int) ([]byte, *hostmem.Memory, error) {
	m, err := hostmem.Map(hostmem.Geometry{SlotBytes: int64(n), SlotCount: 1}, hostmem.Options{})
	if err != nil {
		return nil, nil, err
	}
	return m.Slot(0, 0), m, nil
}

// unmapMemory unmaps what mapMemory mapped: the stand-in device is the
// memory's only user and never lends it (no hold is taken), so it frees.
func unmapMemory(m *hostmem.Memory) error {
	return m.Free()
}
