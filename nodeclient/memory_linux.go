//go:build linux

package nodeclient

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// seals are the seals a lend's memfd carries. F_SEAL_SHRINK is what the
// node requires: a file shrunk under its mapping would kill it with
// SIGBUS. F_SEAL_GROW fixes the size too, so the node's check of it
// against the geometry stays true for the file's life, and F_SEAL_SEAL
// makes the set final: no holder of the fd can add F_SEAL_WRITE or
// F_SEAL_FUTURE_WRITE later.
const seals = unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_SEAL

// memory is the memfd of one lend and the client's shared mapping of it.
type memory struct {
	fd  int
	mem []byte
}

// newMemory creates a memfd of size bytes, sealed, and maps it shared.
// The memfd is close-on-exec, and the mapping is not inherited by a
// child the engine forks.
func newMemory(size int64) (*memory, error) {
	fd, err := unix.MemfdCreate("kvshare-lend", unix.MFD_ALLOW_SEALING|unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	fail := func(what string, err error) (*memory, error) {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("%s of the lend's memfd (%d bytes): %w", what, size, err)
	}
	if err := unix.Ftruncate(fd, size); err != nil {
		return fail("ftruncate", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		return fail("sealing", err)
	}
	mem, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fail("mmap", err)
	}
	if err := unix.Madvise(mem, unix.MADV_DONTFORK); err != nil {
		_ = unix.Munmap(mem)
		return fail("madvise(MADV_DONTFORK)", err)
	}
	return &memory{fd: fd, mem: mem}, nil
}

// release unmaps the memory and closes the memfd. Only for memory the
// node has returned (or never mapped): the engine's side is all that is
// left, and the pages go with it.
func (m *memory) release() error {
	errMap := unix.Munmap(m.mem)
	errClose := unix.Close(m.fd)
	m.mem, m.fd = nil, -1
	if errMap != nil {
		return fmt.Errorf("munmap of the lend's memory: %w", errMap)
	}
	if errClose != nil {
		return fmt.Errorf("close of the lend's memfd: %w", errClose)
	}
	return nil
}
