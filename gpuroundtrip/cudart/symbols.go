package cudart

import "unsafe"

// funcs are the CUDA runtime functions this package calls, bound with
// purego. The Go types follow cuda_runtime_api.h on LP64 Linux:
// cudaError_t and int are int32, size_t is uint64, unsigned int is
// uint32, a device pointer is a uintptr (an address Go never
// dereferences), a pinned host pointer is an unsafe.Pointer (Go views
// it as bytes, and go vet accepts it without a uintptr conversion), and
// const char* results are Go strings (purego copies them; the runtime's
// error strings are static).
//
// cudaMemcpy is bound twice, once per direction, so that the host side
// of each copy is a []byte (its address, for the call) and the device
// side a uintptr.
type funcs struct {
	getDeviceCount    func(count *int32) int32
	setDevice         func(device int32) int32
	deviceGetPCIBusID func(bus []byte, n int32, device int32) int32
	runtimeGetVersion func(v *int32) int32
	driverGetVersion  func(v *int32) int32
	memGetInfo        func(free, total *uint64) int32
	malloc            func(p *uintptr, size uint64) int32
	free              func(p uintptr) int32
	hostAlloc         func(p *unsafe.Pointer, size uint64, flags uint32) int32
	freeHost          func(p unsafe.Pointer) int32
	memcpyToDevice    func(dst uintptr, src []byte, n uint64, kind int32) int32
	memcpyToHost      func(dst []byte, src uintptr, n uint64, kind int32) int32
	deviceSynchronize func() int32
	getErrorName      func(code int32) string
	getErrorString    func(code int32) string
}

// binding is one Go function bound to a symbol.
type binding struct {
	symbol string
	fptr   any
}

// bindings lists every symbol this package calls, with its field; a
// symbol may be bound to more than one field.
func (f *funcs) bindings() []binding {
	return []binding{
		{"cudaGetDeviceCount", &f.getDeviceCount},
		{"cudaSetDevice", &f.setDevice},
		{"cudaDeviceGetPCIBusId", &f.deviceGetPCIBusID},
		{"cudaRuntimeGetVersion", &f.runtimeGetVersion},
		{"cudaDriverGetVersion", &f.driverGetVersion},
		{"cudaMemGetInfo", &f.memGetInfo},
		{"cudaMalloc", &f.malloc},
		{"cudaFree", &f.free},
		{"cudaHostAlloc", &f.hostAlloc},
		{"cudaFreeHost", &f.freeHost},
		{"cudaMemcpy", &f.memcpyToDevice},
		{"cudaMemcpy", &f.memcpyToHost},
		{"cudaDeviceSynchronize", &f.deviceSynchronize},
		{"cudaGetErrorName", &f.getErrorName},
		{"cudaGetErrorString", &f.getErrorString},
	}
}

// cudaMemcpyKind values.
const (
	memcpyHostToDevice = 1
	memcpyDeviceToHost = 2
)

// hostAllocPortable is cudaHostAllocPortable: the pinned memory counts as
// pinned for every CUDA context, not only the current one, which a store
// registering the memory from its own threads needs.
const hostAllocPortable = 1
