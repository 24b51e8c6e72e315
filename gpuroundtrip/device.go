package gpuroundtrip

// Device is where a lender's KV pages live, and the memory it stages them
// in: device memory, pinned host memory, and synchronous copies between
// them. Two implement it: the CUDA runtime ([OpenGPU]) and the host
// stand-in ([NewHostDevice]), so the same round trip runs with and
// without a GPU.
//
// Addresses of device memory are uintptrs that only the Device and its
// copies may use: on a GPU they are not host addresses. Pinned host
// memory is a []byte that lives outside the Go heap until FreeHost, so a
// store driver may hand its address to native code.
//
// Implementations are safe for concurrent use.
type Device interface {
	// Name names the device in a report, e.g. "NVIDIA H200 (index 0, …)".
	Name() string
	// OnGPU reports whether the memory is a GPU's (false: the stand-in).
	OnGPU() bool
	// Alloc allocates n bytes of device memory.
	Alloc(n int64) (uintptr, error)
	// Free frees device memory Alloc returned.
	Free(p uintptr) error
	// AllocHost allocates n bytes of pinned host memory, not zeroed.
	AllocHost(n int64) ([]byte, error)
	// FreeHost frees memory AllocHost returned (the slice as returned).
	FreeHost(b []byte) error
	// CopyToDevice copies src into device memory at dst and returns when
	// it is done; dst..dst+len(src) must lie in one allocation.
	CopyToDevice(dst uintptr, src []byte) error
	// CopyToHost copies device memory at src into dst and returns when it
	// is done; src..src+len(dst) must lie in one allocation.
	CopyToHost(dst []byte, src uintptr) error
	// Synchronize waits until the device has finished all work.
	Synchronize() error
	// Close releases the device itself; free its memory first.
	Close() error
}
