// Package rawmem views memory outside the Go heap by its address. The
// drivers of package memdrv move bytes between such memory (a lender's
// regions) and their store; nothing else in the module touches raw
// addresses.
package rawmem

import "unsafe"

// At returns the n bytes at addr as a slice. The memory must lie outside
// the Go heap (mmap, C allocations) and stay mapped while the slice is
// used; the caller proves that, typically because a live registration
// covers [addr, addr+n). At returns nil for n <= 0.
func At(addr uintptr, n int64) []byte {
	if n <= 0 {
		return nil
	}
	// Reinterpret the address rather than convert it: the memory is not
	// the garbage collector's, so no Go pointer is being forged.
	p := *(*unsafe.Pointer)(unsafe.Pointer(&addr))
	return unsafe.Slice((*byte)(p), n)
}
