package gpuroundtrip

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/kvshare/kvshare/hostmem"
)

// ErrHostDevice is wrapped by the host stand-in's refusals: memory it
// did not allocate, or a copy outside an allocation.
var ErrHostDevice = errors.New("gpuroundtrip: host stand-in device")

// HostDevice is the stand-in [Device] for machines without a GPU: its
// "device memory" is host memory mapped outside the Go heap, kept apart
// from its pinned memory (also mapped), and its copies are memory
// copies, checked against its allocations as the CUDA runtime's are.
// The zero value is not usable; use [NewHostDevice].
type HostDevice struct {
	mu   sync.Mutex
	dev  map[uintptr]hostAlloc // device allocations by address
	host map[uintptr]hostAlloc // pinned allocations by address
}

// hostAlloc is one allocation of the stand-in: its bytes and mapping.
type hostAlloc struct {
	b   []byte
	mem *hostmem.Memory
}

// NewHostDevice returns an empty stand-in device.
func NewHostDevice() *HostDevice {
	return &HostDevice{dev: map[uintptr]hostAlloc{}, host: map[uintptr]hostAlloc{}}
}

var _ Device = (*HostDevice)(nil)

// Name is "host memory (stand-in for a GPU)".
func (d *HostDevice) Name() string { return "host memory (stand-in for a GPU)" }

// OnGPU is false.
func (d *HostDevice) OnGPU() bool { return false }

// Alloc maps n bytes of "device memory".
func (d *HostDevice) Alloc(n int64) (uintptr, error) {
	b, err := d.alloc(d.dev, n, "Alloc")
	if err != nil {
		return 0, err
	}
	return addrOf(b), nil
}

// Free unmaps memory Alloc returned.
func (d *HostDevice) Free(p uintptr) error { return d.free(d.dev, p, "Free") }

// AllocHost maps n bytes of "pinned" host memory.
func (d *HostDevice) AllocHost(n int64) ([]byte, error) { return d.alloc(d.host, n, "AllocHost") }

// FreeHost unmaps memory AllocHost returned.
func (d *HostDevice) FreeHost(b []byte) error { return d.free(d.host, addrOf(b), "FreeHost") }

// CopyToDevice copies src into the device allocation at dst.
func (d *HostDevice) CopyToDevice(dst uintptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	mem, err := d.deviceRange(dst, len(src), "CopyToDevice")
	if err != nil {
		return err
	}
	copy(mem, src)
	return nil
}

// CopyToHost copies the device allocation at src into dst.
func (d *HostDevice) CopyToHost(dst []byte, src uintptr) error {
	if len(dst) == 0 {
		return nil
	}
	mem, err := d.deviceRange(src, len(dst), "CopyToHost")
	if err != nil {
		return err
	}
	copy(dst, mem)
	return nil
}

// Synchronize has nothing to wait for: copies are done when they return.
func (d *HostDevice) Synchronize() error { return nil }

// Close does nothing; memory still allocated stays mapped.
func (d *HostDevice) Close() error { return nil }

// Live returns the allocations not yet freed: device and pinned.
func (d *HostDevice) Live() (device, host int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.dev), len(d.host)
}

func (d *HostDevice) alloc(set map[uintptr]hostAlloc, n int64, op string) ([]byte, error) {
	if n <= 0 || int64(int(n)) != n {
		return nil, fmt.Errorf("%w: %s(%d): size must be > 0", ErrHostDevice, op, n)
	}
	b, mem, err := mapMemory(int(n))
	if err != nil {
		return nil, fmt.Errorf("%w: %s(%d): %w", ErrHostDevice, op, n, err)
	}
	d.mu.Lock()
	set[addrOf(b)] = hostAlloc{b: b, mem: mem}
	d.mu.Unlock()
	return b, nil
}

func (d *HostDevice) free(set map[uintptr]hostAlloc, p uintptr, op string) error {
	d.mu.Lock()
	a, ok := set[p]
	delete(set, p)
	d.mu.Unlock()
	if !ok || p == 0 {
		return fmt.Errorf("%w: %s(%#x): not allocated by this device", ErrHostDevice, op, p)
	}
	return unmapMemory(a.mem)
}

// deviceRange returns the device bytes [p, p+n), which must lie in one
// allocation.
func (d *HostDevice) deviceRange(p uintptr, n int, op string) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for base, a := range d.dev {
		b := a.b
		if p >= base && uint64(p-base) <= uint64(len(b)) && uint64(n) <= uint64(len(b))-uint64(p-base) {
			off := int(p - base)
			return b[off : off+n], nil
		}
	}
	return nil, fmt.Errorf("%w: %s: device range [%#x, +%d) is not inside an allocation", ErrHostDevice, op, p, n)
}

// addrOf is the address of b's first byte.
func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
