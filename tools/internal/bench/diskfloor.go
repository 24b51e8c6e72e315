package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/diskdrv"
)

// diskFloor is measurement 9's floor: per row, open + one pwrite (a
// put) or open + one pread (a get) of the row's bytes from or into the
// same lent memory, one file per row in the floor's folder, with the
// driver's flags (O_DIRECT when the driver moves these rows with it)
// and the sync its durability asks (fdatasync for data and full, the
// folder's fsync too for full), on as many bare goroutines as the
// driver has workers, each taking the next row. No header, no
// temporary file, no rename, no index: what the driver adds.
type diskFloor struct {
	dir        string
	workers    int
	direct     bool
	durability diskdrv.Durability
}

// path is the file of row i of a round.
func (f *diskFloor) path(round, i int) string {
	return filepath.Join(f.dir, fmt.Sprintf("%d-%d", round, i))
}

// run moves slots (row i in slot i) in direction dir and returns the
// rows that came back Ready: a put whose bytes were all written (and
// synced as asked), a get that filled its slot.
func (f *diskFloor) run(dir contract.Direction, round int, slots [][]byte) int {
	var next, ready atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(f.workers, len(slots))) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(slots) {
					return
				}
				var err error
				if dir == contract.PutDir {
					err = f.put(f.path(round, i), slots[i])
				} else {
					err = f.get(f.path(round, i), slots[i])
				}
				if err == nil {
					ready.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return int(ready.Load())
}

func (f *diskFloor) flags(base int) int {
	if f.direct {
		base |= unix.O_DIRECT
	}
	return base | unix.O_CLOEXEC
}

func (f *diskFloor) put(path string, b []byte) error {
	fd, err := unix.Open(path, f.flags(unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC), 0o644)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := whole(unix.Pwrite, fd, b); err != nil {
		return err
	}
	if f.durability == diskdrv.None {
		return nil
	}
	if err := unix.Fdatasync(fd); err != nil || f.durability != diskdrv.Full {
		return err
	}
	return syncFolder(f.dir)
}

func (f *diskFloor) get(path string, b []byte) error {
	fd, err := unix.Open(path, f.flags(unix.O_RDONLY), 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return whole(unix.Pread, fd, b)
}

// whole moves all of b with move (pwrite or pread) from offset 0,
// going on after a short move.
func whole(move func(fd int, p []byte, off int64) (int, error), fd int, b []byte) error {
	for off := 0; off < len(b); {
		n, err := move(fd, b[off:], int64(off))
		if err != nil || n <= 0 {
			return errors.Join(err, errShort)
		}
		off += n
	}
	return nil
}

// errShort is a pwrite or pread that moved nothing before the row's end.
var errShort = errors.New("bench: the file ended before the row")

// syncFolder fsyncs a folder, as the driver syncs an object's after its
// rename with durability full.
func syncFolder(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fsync(fd)
}

// remove removes a round's n files, which must all be there when
// stored says so.
func (f *diskFloor) remove(round, n, stored int) error {
	removed := 0
	for i := range n {
		err := os.Remove(f.path(round, i))
		switch {
		case err == nil:
			removed++
		case !errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("bench: removing the floor's files: %w", err)
		}
	}
	if removed < stored {
		return fmt.Errorf("bench: %d floor files removed after a round that stored %d", removed, stored)
	}
	return nil
}
