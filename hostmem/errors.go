package hostmem

import "errors"

// The errors of this package, each wrapped with what was wrong.
var (
	// ErrGeometry: Map was given a geometry it cannot map; the error
	// names the field. Nothing was mapped.
	ErrGeometry = errors.New("hostmem: bad geometry")
	// ErrLent: Free was refused because the memory is still lent (a
	// hold taken was not released), or kept for good. Nothing was
	// unmapped.
	ErrLent = errors.New("hostmem: memory still lent")
	// ErrFreed: a hold was asked of memory already freed.
	ErrFreed = errors.New("hostmem: memory freed")
	// ErrMap: the kernel refused the mapping itself.
	ErrMap = errors.New("hostmem: mmap failed")
)
