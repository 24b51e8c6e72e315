// Package slotmem views lent memory, given by address, as Go values
// without copying: the bytes of a put's span as the string a command
// takes, the span of a get as the slice its value lands in.
package slotmem

import "unsafe"

// Bytes is the n bytes at addr; nil for n <= 0.
func Bytes(addr uintptr, n int64) []byte {
	if n <= 0 {
		return nil
	}
	// Reinterpret the address rather than convert it: the memory is not
	// the garbage collector's, so no Go pointer is being forged.
	p := *(*unsafe.Pointer)(unsafe.Pointer(&addr))
	return unsafe.Slice((*byte)(p), n)
}

// String is the n bytes at addr as a string that shares them; "" for
// n <= 0. It must not be kept past the access that lent the memory.
func String(addr uintptr, n int64) string {
	b := Bytes(addr, n)
	return unsafe.String(unsafe.SliceData(b), len(b))
}
