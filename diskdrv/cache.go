package diskdrv

import (
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// DropCache drops the page cache of the file at path, or of every
// regular file under path when it is a directory, with
// posix_fadvise(POSIX_FADV_DONTNEED): the next read of them comes from
// the device (dirty pages are not dropped; a file written with direct
// I/O has none). A benchmark calls it between a write and a timed read.
func DropCache(path string) error {
	err := filepath.WalkDir(path, func(p string, de fs.DirEntry, err error) error {
		if err != nil || !de.Type().IsRegular() {
			return err
		}
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED)
	})
	if err != nil {
		return fmt.Errorf("diskdrv: dropping the page cache of %s: %w", path, err)
	}
	return nil
}

// Path is the file that holds key's object, whether or not there is
// one: what a reader without the store's index would look for.
func (s *Store) Path(key string) string { return objectPath(s.dir, digest(key)) }

// Remove deletes key's complete object, its file and its room, and
// reports whether there was one (a key being written is left alone).
func (s *Store) Remove(key string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el := s.index[key]
	if el == nil {
		return false, nil
	}
	if err := s.removeLocked(el); err != nil {
		return true, fmt.Errorf("diskdrv: removing %q: %w", key, err)
	}
	return true, nil
}
