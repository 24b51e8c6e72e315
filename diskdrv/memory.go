package diskdrv

import (
	"sync"
	"unsafe"

	"github.com/kvshare/kvshare/contract"
)

// at views n bytes of lent memory at addr (memory outside the Go heap,
// valid while the caller lends it).
func at(addr uintptr, n int64) []byte {
	return unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&addr))), n)
}

// aligned says whether every span of spans starts and ends on a page:
// what direct I/O needs.
func aligned(spans []contract.Span) bool {
	for _, sp := range spans {
		if sp.Addr%pageBytes != 0 || sp.Len%pageBytes != 0 {
			return false
		}
	}
	return true
}

// pages lends header pages aligned for direct I/O (Go's heap does not
// move what it allocated).
var pages = sync.Pool{New: func() any {
	buf := make([]byte, 2*pageBytes)
	off := int(-uintptr(unsafe.Pointer(&buf[0])) & (pageBytes - 1))
	p := buf[off : off+pageBytes : off+pageBytes]
	return &p
}}

// addrOf is the address of b's first byte (b not empty).
func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }
