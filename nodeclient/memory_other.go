//go:build !linux

package nodeclient

import (
	"errors"
	"fmt"
)

// memory is a lend's memfd; there is none off Linux.
type memory struct {
	fd  int
	mem []byte
}

func newMemory(size int64) (*memory, error) {
	return nil, fmt.Errorf("a lend of %d bytes: %w", size, errors.ErrUnsupported)
}

func (m *memory) release() error { return nil }
