package bench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/diskdrv"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
)

// diskRig is measurement 9's stage: the store over the target's
// directory, kvshare (a backend over a diskdrv driver, one region of
// slots per row size), and the floor, which moves the same slots'
// bytes into its own folder (never at the same time as kvshare).
type diskRig struct {
	o      Options
	t      *diskTarget
	store  *diskdrv.Store
	kv     *lender
	stem   keys.Stem
	floor  *diskFloor
	direct string // whether direct I/O is used, and why not
}

// newDiskRig opens the target's store and lends it one region a row
// size. On error everything built is given back, the target's folders
// removed.
func newDiskRig(o Options, logger *slog.Logger) (*diskRig, error) {
	t, err := openDiskTarget(o.Disk, logger)
	if err != nil {
		return nil, err
	}
	r := &diskRig{o: o, t: t}
	if r.stem, err = keys.NewStem(t.cfg.KeyPrefix); err != nil {
		return nil, errors.Join(err, t.remove())
	}
	if r.store, err = diskdrv.Open(t.dir, t.store); err != nil {
		return nil, errors.Join(fmt.Errorf("bench: %w", err), t.remove())
	}
	r.direct = "used: O_DIRECT for page-aligned rows, on both sides"
	switch {
	case t.store.NoDirectIO:
		r.direct = "not used: the store file's direct_io is false (both sides go through the page cache)"
	case !r.store.DirectIO():
		r.direct = fmt.Sprintf("not used (both sides go through the page cache): %v", diskdrv.DirectIOWorks(t.dir))
	}
	drv := diskdrv.New(r.store, t.driver)
	r.floor = &diskFloor{dir: t.floorDir, workers: r.workers(), direct: r.store.DirectIO(), durability: t.store.Durability}
	var mems []*memdrv.Memory
	for _, rs := range o.Disk.RowSizes {
		m, err := memdrv.Alloc(rs, o.Disk.rows(rs), contract.Host)
		if err != nil {
			for _, m := range mems {
				err = errors.Join(err, m.Free())
			}
			return nil, errors.Join(err, closeIdle(drv), r.store.Close(), t.remove())
		}
		fill(m.Bytes, byte(len(mems)+1))
		mems = append(mems, m)
	}
	if r.kv, err = lendMemory(drv, t.cfg, observed(o, Disk), mems...); err != nil {
		if !errors.Is(err, errMemoryKept) {
			for _, m := range mems {
				err = errors.Join(err, m.Free())
			}
		}
		return nil, errors.Join(err, r.store.Close(), t.remove())
	}
	return r, nil
}

// workers is the driver's worker goroutines (and the floor's).
func (r *diskRig) workers() int {
	if w := r.t.driver.Workers; w > 0 {
		return w
	}
	return 4 // diskdrv's default
}

// callRows is the driver's rows a store call.
func (r *diskRig) callRows() int { return max(1, r.t.driver.CallRows) }

// close gives kvshare's lender back (its driver closed), closes the
// store and removes what the run made.
func (r *diskRig) close() error {
	return errors.Join(r.kv.close(), r.store.Close(), r.t.remove())
}

// keys are the store keys of names, as the backend builds them.
func (r *diskRig) keys(names [][]byte) ([]string, error) {
	out := make([]string, len(names))
	for i, n := range names {
		k, err := r.stem.Key(n)
		if err != nil {
			return nil, err
		}
		out[i] = k
	}
	return out, nil
}

// dropCache drops the page cache of the objects of ks (those there).
func (r *diskRig) dropCache(ks []string) error {
	for _, k := range ks {
		if err := diskdrv.DropCache(r.store.Path(k)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// remove removes the objects of ks, which must number stored.
func (r *diskRig) remove(ks []string, stored int) error {
	removed := 0
	for _, k := range ks {
		ok, err := r.store.Remove(k)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		if ok {
			removed++
		}
	}
	if removed != stored {
		return fmt.Errorf("bench: %d objects removed after a round that stored %d", removed, stored)
	}
	return nil
}

// slots are the first n slots of region ri.
func (r *diskRig) slots(ri, n int, rowBytes int64) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = r.kv.mems[ri].Bytes[int64(i)*rowBytes : int64(i+1)*rowBytes : int64(i+1)*rowBytes]
	}
	return out
}

// lookupStage is the lookup case over the store: a backend over a
// driver of its own, objects seeded under the run's prefix (removed
// after), and for the floor a stat of each asked name's object file.
func (r *diskRig) lookupStage() (*lookupStage, error) {
	drv := diskdrv.New(r.store, r.t.driver)
	st, stem, err := inProcessLookupStage(r.o, lookupDisk, r.t.cfg.KeyPrefix+"/lookup", observed(r.o, Disk), drv, func(key string, data []byte) error {
		if v := r.store.Seed(key, data); v != contract.Ready {
			return fmt.Errorf("storing %q: %v", key, v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	st.measurement = Disk
	st.remove = func(names [][]byte) error {
		for _, n := range names {
			k, err := stem.Key(n)
			if err != nil {
				return err
			}
			if _, err := r.store.Remove(k); err != nil {
				return err
			}
		}
		return nil
	}
	st.floor = func(_ context.Context, calls [][][]byte, _ bool) (*lookupFloor, error) {
		return r.statFloor(stem, calls)
	}
	return st, nil
}

// statFloor stats the object file of every name of calls, in order:
// what a reader with no index in memory asks the file system at the
// least (the paths, each key's digest, found before the clock).
func (r *diskRig) statFloor(stem keys.Stem, calls [][][]byte) (*lookupFloor, error) {
	var paths []string
	for _, names := range calls {
		for _, n := range names {
			k, err := stem.Key(n)
			if err != nil {
				return nil, err
			}
			paths = append(paths, r.store.Path(k))
		}
	}
	answers := make([]contract.Presence, 0, len(paths))
	var st unix.Stat_t
	return &lookupFloor{
		run: func() error {
			answers = answers[:0]
			for _, p := range paths {
				err := unix.Stat(p, &st)
				switch {
				case err == nil:
					answers = append(answers, contract.Present)
				case errors.Is(err, unix.ENOENT):
					answers = append(answers, contract.Absent)
				default:
					return fmt.Errorf("stat %s: %w", p, err)
				}
			}
			return nil
		},
		answers:   func() []contract.Presence { return answers },
		sizeCalls: func() int { return 0 },
	}, nil
}
