//go:build !unix

package gpuroundtrip

import "errors"

var errNoMmap = errors.New("memory outside the Go heap needs mmap (unix only)")

func mapMemory(int) ([]byte, error) { return nil, errNoMmap }

func unmapMemory([]byte) error { return errNoMmap }
