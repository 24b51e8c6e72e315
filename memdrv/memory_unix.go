//go:build unix

package memdrv

import (
	"os"
	"syscall"
	"unsafe"
)

func pageSize() int { return os.Getpagesize() }

// mapAnon maps n bytes of private anonymous memory, readable and
// writable, and returns them with their address.
func mapAnon(n int) ([]byte, uintptr, error) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, 0, err
	}
	return b, uintptr(unsafe.Pointer(unsafe.SliceData(b))), nil
}

func unmap(b []byte) error { return syscall.Munmap(b) }
