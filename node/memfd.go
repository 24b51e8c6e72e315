package node

import (
	"math"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodewire"
)

// geometry is a lend's layout, checked: region i at i×stride, slot j of
// it at i×stride + j×slotBytes, bytes = regions×stride.
type geometry struct {
	slotBytes int64
	slotCount int
	regions   int
	stride    int64
	bytes     int64
}

// checkGeometry checks a lend's geometry against the protocol's layout
// and the node's limits: maxRegions, and room (bytes this engine may
// still lend).
func checkGeometry(slotBytes uint64, slotCount, regions uint32, maxRegions int, room int64) (geometry, *refusal) {
	switch {
	case slotBytes == 0:
		return geometry{}, refuse(nodewire.CodeBadLend, "lend.slot_bytes", "0, want at least 1")
	case slotBytes > math.MaxInt64:
		return geometry{}, refuse(nodewire.CodeBadLend, "lend.slot_bytes", "%d overflows", slotBytes)
	case slotCount == 0:
		return geometry{}, refuse(nodewire.CodeBadLend, "lend.slot_count", "0, want at least 1")
	case slotCount > math.MaxInt32:
		return geometry{}, refuse(nodewire.CodeBadLend, "lend.slot_count", "%d, want at most %d", slotCount, math.MaxInt32)
	case regions == 0:
		return geometry{}, refuse(nodewire.CodeBadLend, "lend.regions", "0, want at least 1")
	case int64(regions) > int64(maxRegions):
		return geometry{}, refuse(nodewire.CodeLimitExceeded, "lend.regions", "%d regions, over the node's limit of %d", regions, maxRegions)
	}
	stride, err := nodewire.Stride(int64(slotBytes), int(slotCount))
	if err != nil {
		return geometry{}, refuse(nodewire.CodeBadLend, "lend.slot_bytes", "slot_bytes × slot_count: %v", err)
	}
	if stride > math.MaxInt64/int64(regions) {
		return geometry{}, refuse(nodewire.CodeBadLend, "lend.regions", "%d regions of %d bytes overflow", regions, stride)
	}
	g := geometry{slotBytes: int64(slotBytes), slotCount: int(slotCount), regions: int(regions), stride: stride, bytes: stride * int64(regions)}
	if g.bytes > room {
		return geometry{}, refuse(nodewire.CodeLimitExceeded, "lend.bytes", "%d bytes (regions × stride), over the %d this engine may still lend", g.bytes, room)
	}
	return g, nil
}

// inspectMemfd checks that fd is a memfd the node may map for g: sealed
// against shrinking (a file shrunk under the node's mapping would kill
// it with SIGBUS), not against writing (a fetch writes its slots), and
// at least g.bytes long. It reads the file's seals and size only.
func inspectMemfd(fd int, g geometry) *refusal {
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil {
		return refuse(nodewire.CodeBadLend, "lend.fd", "not a memfd: F_GET_SEALS: %v", err)
	}
	if seals&unix.F_SEAL_SHRINK == 0 {
		return refuse(nodewire.CodeBadLend, "lend.fd", "the memfd is not sealed against shrinking (F_SEAL_SHRINK); seals 0x%x", seals)
	}
	if seals&(unix.F_SEAL_WRITE|unix.F_SEAL_FUTURE_WRITE) != 0 {
		return refuse(nodewire.CodeBadLend, "lend.fd", "the memfd is sealed against writing (seals 0x%x): fetches write its slots", seals)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return refuse(nodewire.CodeBadLend, "lend.fd", "fstat: %v", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return refuse(nodewire.CodeBadLend, "lend.fd", "not a memfd: file mode 0%o", st.Mode)
	}
	if st.Size < g.bytes {
		return refuse(nodewire.CodeBadLend, "lend.regions", "%d regions of %d bytes need %d bytes, larger than the memfd's %d",
			g.regions, g.stride, g.bytes, st.Size)
	}
	return nil
}

// mapping is a lend's memory as the node maps it: the memfd's first
// g.bytes, shared with the engine. Release (the binding's hold) unmaps
// it; nothing else does.
type mapping struct {
	mem      []byte
	g        geometry
	once     sync.Once
	released func(m *mapping, err error) // told once Release ran: err is munmap's
}

// mapMemfd maps fd for g (MAP_SHARED, read and write) and marks the
// mapping MADV_DONTFORK, so a child the node forks never shares it. The
// caller closes fd either way: the mapping keeps the file alive.
func mapMemfd(fd int, g geometry, released func(*mapping, error)) (*mapping, *refusal) {
	if uint64(g.bytes) > uint64(math.MaxInt) {
		return nil, refuse(nodewire.CodeBadLend, "lend.regions", "%d bytes do not fit this node's address space", g.bytes)
	}
	mem, err := unix.Mmap(fd, 0, int(g.bytes), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, refuse(nodewire.CodeBadLend, "lend.fd", "mmap of %d bytes: %v", g.bytes, err)
	}
	if err := unix.Madvise(mem, unix.MADV_DONTFORK); err != nil {
		_ = unix.Munmap(mem)
		return nil, refuse(nodewire.CodeBadLend, "lend.fd", "madvise(MADV_DONTFORK): %v", err)
	}
	return &mapping{mem: mem, g: g, released: released}, nil
}

// regions are the lend's regions over the mapping, as binding takes them.
func (m *mapping) regions() []contract.SlotRegion {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m.mem)))
	rs := make([]contract.SlotRegion, m.g.regions)
	for i := range rs {
		rs[i] = contract.SlotRegion{
			Base:      base + uintptr(int64(i)*m.g.stride),
			SlotBytes: m.g.slotBytes,
			SlotCount: m.g.slotCount,
			Len:       m.g.slotBytes * int64(m.g.slotCount),
			Kind:      contract.Host,
		}
	}
	return rs
}

// Release unmaps the memory: the binding calls it once every region is
// confirmed unregistered, so no store can touch the memory any more.
// An munmap that fails leaves the memory mapped (and counted lent).
func (m *mapping) Release() {
	m.once.Do(func() {
		err := unix.Munmap(m.mem)
		if m.released != nil {
			m.released(m, err)
		}
	})
}

// closeFile closes a descriptor the engine passed.
func closeFile(fd int) error { return unix.Close(fd) }
