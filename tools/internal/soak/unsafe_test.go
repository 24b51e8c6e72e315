package soak

import (
	"unsafe"

	"github.com/kvshare/kvshare/contract"
)

// unsafeSlice is the memory behind a span: lent memory outside the Go
// heap (an mmap of memdrv.Alloc), which the test's driver writes while
// the row runs. The address is converted as the runtime's own
// unsafe.Add(nil, addr) would, which vet accepts.
func unsafeSlice(s contract.Span) []byte {
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(nil), s.Addr)), s.Len)
}
