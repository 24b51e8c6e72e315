package diskdrv

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// DirectIOWorks says whether dir's file system takes direct I/O: it
// writes, reads back and removes one page through O_DIRECT. nil means
// it does; the error says why not (tmpfs refuses O_DIRECT at open).
func DirectIOWorks(dir string) error {
	path := filepath.Join(dir, ".direct-probe"+tmpSuffix)
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_TRUNC|unix.O_DIRECT|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("diskdrv: %s does not open files with O_DIRECT: %w", dir, err)
	}
	defer os.Remove(path)
	defer unix.Close(fd)
	pp := pages.Get().(*[]byte)
	defer pages.Put(pp)
	page := *pp
	copy(page, "kvshare direct I/O probe")
	if n, err := unix.Pwrite(fd, page, 0); err != nil || n != len(page) {
		return fmt.Errorf("diskdrv: %s: a direct write of one page wrote %d bytes: %v", dir, n, err)
	}
	if n, err := unix.Pread(fd, page, 0); err != nil || n != len(page) {
		return fmt.Errorf("diskdrv: %s: a direct read of one page read %d bytes: %v", dir, n, err)
	}
	return nil
}
