package doctor

import (
	"fmt"
	"syscall"
	"unsafe"
)

// probeMemory is the probe's buffer: anonymous memory outside the Go
// heap, as every buffer handed to the store must be.
type probeMemory struct {
	bytes []byte
}

func mapProbe(n int) (*probeMemory, error) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("mapping %d bytes for the probe: %w", n, err)
	}
	return &probeMemory{bytes: b}, nil
}

func (m *probeMemory) base() uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(m.bytes))) }

// addr is the address of byte i.
func (m *probeMemory) addr(i int) uintptr { return m.base() + uintptr(i) }

func (m *probeMemory) free() error { return syscall.Munmap(m.bytes) }
