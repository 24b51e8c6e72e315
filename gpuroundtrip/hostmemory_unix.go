//go:build unix

package gpuroundtrip

import "syscall"

// mapMemory maps n bytes of anonymous, zeroed memory outside the Go heap.
func mapMemory(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

// unmapMemory unmaps what mapMemory mapped.
func unmapMemory(b []byte) error { return syscall.Munmap(b) }
