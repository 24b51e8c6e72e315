package cudart

import (
	"fmt"
	"unsafe"
)

// Alloc allocates n bytes of device memory (cudaMalloc) and returns the
// device address. It is not host memory: only copies and the device may
// touch it.
func (r *Runtime) Alloc(n int64) (uintptr, error) {
	if n <= 0 {
		return 0, fmt.Errorf("%w: Alloc(%d): size must be > 0", ErrBadArgument, n)
	}
	var p uintptr
	if err := r.call(func() string { return fmt.Sprintf("cudaMalloc(%d)", n) },
		func() int32 { return r.lib.fn.malloc(&p, uint64(n)) }); err != nil {
		return 0, err
	}
	r.mu.Lock()
	r.dev[p] = n
	r.mu.Unlock()
	return p, nil
}

// Free frees device memory Alloc returned (cudaFree). An address Alloc
// did not return, or one already freed, is refused with
// [ErrNotAllocated] without calling the runtime.
func (r *Runtime) Free(p uintptr) error {
	if err := r.forget(r.dev, p, "Free"); err != nil {
		return err
	}
	return r.call(func() string { return fmt.Sprintf("cudaFree(%#x)", p) },
		func() int32 { return r.lib.fn.free(p) })
}

// AllocHost allocates n bytes of pinned host memory (cudaHostAlloc,
// cudaHostAllocPortable) and returns it as bytes. The memory lives
// outside the Go heap, is not zeroed, and stays valid until FreeHost:
// drivers may hand its address to native code.
func (r *Runtime) AllocHost(n int64) ([]byte, error) {
	if n <= 0 {
		return nil, fmt.Errorf("%w: AllocHost(%d): size must be > 0", ErrBadArgument, n)
	}
	var p unsafe.Pointer
	if err := r.call(func() string { return fmt.Sprintf("cudaHostAlloc(%d)", n) },
		func() int32 { return r.lib.fn.hostAlloc(&p, uint64(n), hostAllocPortable) }); err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.host[uintptr(p)] = n
	r.mu.Unlock()
	return unsafe.Slice((*byte)(p), n), nil
}

// FreeHost frees pinned memory AllocHost returned (cudaFreeHost); b must
// start where AllocHost's slice started. Other memory, or memory already
// freed, is refused with [ErrNotAllocated] without calling the runtime.
func (r *Runtime) FreeHost(b []byte) error {
	p := unsafe.Pointer(unsafe.SliceData(b))
	if err := r.forget(r.host, uintptr(p), "FreeHost"); err != nil {
		return err
	}
	return r.call(func() string { return fmt.Sprintf("cudaFreeHost(%p)", p) },
		func() int32 { return r.lib.fn.freeHost(p) })
}

// forget removes p from allocs, or says it was never there.
func (r *Runtime) forget(allocs map[uintptr]int64, p uintptr, op string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := allocs[p]; !ok || p == 0 {
		return fmt.Errorf("%w: %s(%#x)", ErrNotAllocated, op, p)
	}
	delete(allocs, p)
	return nil
}

// deviceRange checks that [p, p+n) lies inside one live device
// allocation of this runtime.
func (r *Runtime) deviceRange(p uintptr, n int, op string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for base, size := range r.dev {
		if p >= base && uint64(p-base) <= uint64(size) && uint64(n) <= uint64(size)-uint64(p-base) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s: device range [%#x, +%d) is not inside an allocation of this runtime", ErrBadArgument, op, p, n)
}
