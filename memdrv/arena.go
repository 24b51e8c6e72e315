package memdrv

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// arena is a store's memory for objects, taken up front outside the Go
// heap (an anonymous mapping, as a Mooncake segment is mounted), so that
// a put copies into memory already faulted in rather than into a fresh
// heap object the runtime zeroes and the kernel maps page by page. Blocks
// are carved in order and come back, by exact size, to free lists when
// their object is dropped and no get reads it. It is guarded by the
// store's lock.
type arena struct {
	mem  []byte
	off  int64              // the first byte never carved
	free map[int64][][]byte // blocks given back, by size
	// Prefault is how long mapping and faulting the memory in took.
	prefault time.Duration
}

// newArena maps capacity bytes, faulting every page in (MAP_POPULATE).
func newArena(capacity int64) (*arena, error) {
	start := time.Now()
	mem, err := unix.Mmap(-1, 0, int(capacity), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("memdrv: mapping a store of %d bytes: %w", capacity, err)
	}
	return &arena{mem: mem, free: make(map[int64][][]byte), prefault: time.Since(start)}, nil
}

// alloc returns a block of size bytes, or false when none is left: a
// block of that size given back, else the next size bytes never carved.
func (a *arena) alloc(size int64) ([]byte, bool) {
	if list := a.free[size]; len(list) > 0 {
		b := list[len(list)-1]
		a.free[size] = list[:len(list)-1]
		return b, true
	}
	if size > int64(len(a.mem))-a.off {
		return nil, false
	}
	b := a.mem[a.off : a.off+size : a.off+size]
	a.off += size
	return b, true
}

// release gives a block back for a later object of its size.
func (a *arena) release(b []byte) {
	n := int64(len(b))
	a.free[n] = append(a.free[n], b)
}
