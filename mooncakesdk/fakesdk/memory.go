package fakesdk

import "unsafe"

// memoryAt views n bytes at addr: memory outside the Go heap that the
// caller lent to the store (mmap, pinned host memory, C allocations). The
// address is converted through a pointer to it, which keeps go vet's
// unsafe.Pointer check quiet for what is, here, a foreign address.
func memoryAt(addr uintptr, n uint64) []byte {
	if n == 0 {
		return nil
	}
	p := *(*unsafe.Pointer)(unsafe.Pointer(&addr))
	return unsafe.Slice((*byte)(p), n)
}
