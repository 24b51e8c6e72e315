//go:build !unix

package memdrv

import (
	"errors"
	"os"
)

var errNoMmap = errors.New("anonymous mmap is not available on this platform")

func pageSize() int { return os.Getpagesize() }

func mapAnon(int) ([]byte, uintptr, error) { return nil, 0, errNoMmap }

func unmap([]byte) error { return errNoMmap }
