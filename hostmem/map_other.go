//go:build !linux

package hostmem

import "fmt"

// Map needs Linux (mmap with MADV_DONTFORK); elsewhere it refuses.
func Map(g Geometry, o Options) (*Memory, error) {
	if _, _, err := g.check(4096); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%w: hostmem maps memory on Linux only", ErrMap)
}

func unmap([]byte) error { return nil }
