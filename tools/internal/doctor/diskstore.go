package doctor

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/diskdrv"
)

// The checks of a disk tier's file ([disk]) after CheckConfig and
// CheckKeyPrefix.
const (
	// CheckDiskDir: the directory exists and this user can create,
	// write and remove files in it (or, missing, its parent lets the
	// store create it); its lock is free.
	CheckDiskDir = "directory"
	// CheckDiskSpace: the file system's free space against the
	// capacity.
	CheckDiskSpace = "space"
	// CheckDirectIO: whether the file system takes O_DIRECT (else every
	// row goes through the page cache).
	CheckDirectIO = "direct I/O"
)

// diskChecks lists every check of a disk tier's file in order.
var diskChecks = [...]string{CheckConfig, CheckKeyPrefix, CheckDiskDir, CheckDiskSpace, CheckDirectIO}

// runDisk is Run for a disk tier's file: the config, the key prefix,
// the directory (permissions and lock), its space and direct I/O.
func runDisk(opts Options) Report {
	r := &run{Report: Report{File: opts.ConfigPath}, all: diskChecks[:]}
	sf, err := diskdrv.LoadStoreFile(opts.ConfigPath)
	if err != nil {
		r.add(fail(CheckConfig, "%s", configLines(err)))
		r.skipRest("the config was refused")
		return r.Report
	}
	d := sf.Disk.WithDefaults()
	r.add(ok(CheckConfig, "%s: the disk tier in %s, capacity %s, evict %t, durability %s, direct_io %t, %d workers",
		opts.ConfigPath, d.Dir, capacityText(d.Capacity), d.Evict, d.Durability, d.DirectIO, d.Workers))
	r.add(checkMemoryKeyPrefix(opts.ConfigPath, sf.Blob))
	where, f := checkDiskDir(d.Dir)
	if !r.add(f) {
		r.skipRest("the directory cannot hold the store")
		return r.Report
	}
	r.add(checkDiskSpace(where, d.Capacity))
	r.add(checkDirectIO(where, d.DirectIO))
	return r.Report
}

func capacityText(c int64) string {
	if c == 0 {
		return "0 (the disk's)"
	}
	return size(c)
}

// checkDiskDir checks dir, or its parent when dir is missing, and
// returns the directory the other checks look at.
func checkDiskDir(dir string) (string, Finding) {
	st, err := os.Stat(dir)
	missing := errors.Is(err, os.ErrNotExist)
	where := dir
	switch {
	case missing:
		where = filepath.Dir(dir)
		if pst, perr := os.Stat(where); perr != nil || !pst.IsDir() {
			return where, fail(CheckDiskDir, "%s does not exist, nor does its parent %s as a directory: create it", dir, where)
		}
	case err != nil:
		return where, fail(CheckDiskDir, "%s: %v", dir, err)
	case !st.IsDir():
		return where, fail(CheckDiskDir, "%s is not a directory", dir)
	}
	probe, err := os.CreateTemp(where, ".kvshare-doctor-*")
	if err != nil {
		return where, fail(CheckDiskDir, "this user cannot create files in %s: %v", where, err)
	}
	_, werr := probe.Write([]byte("kvshare doctor"))
	_ = probe.Close()
	rerr := os.Remove(probe.Name())
	if werr != nil || rerr != nil {
		return where, fail(CheckDiskDir, "writing and removing a file in %s: %v", where, errors.Join(werr, rerr))
	}
	if missing {
		return where, ok(CheckDiskDir, "%s does not exist yet; the store creates it in %s, which this user can write", dir, where)
	}
	if held, err := lockHeld(dir); err != nil {
		return where, fail(CheckDiskDir, "%s: its lock file: %v", dir, err)
	} else if held {
		return where, warn(CheckDiskDir, "%s is writable, and held by a running store (its LOCK is locked): a second store cannot open it", dir)
	}
	return where, ok(CheckDiskDir, "%s is writable by this user and free (no store holds its lock)", dir)
}

// lockHeld says whether another process holds dir's lock file.
func lockHeld(dir string) (bool, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return true, nil
		}
		return false, err
	}
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return false, nil
}

// checkDiskSpace compares the file system's free space with the
// capacity: a capacity beyond the whole file system fails, one beyond
// the free space warns (puts will meet a full disk first: Declined).
func checkDiskSpace(dir string, capacity int64) Finding {
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		return fail(CheckDiskSpace, "statfs %s: %v", dir, err)
	}
	total, free := int64(fs.Blocks)*fs.Bsize, int64(fs.Bavail)*fs.Bsize
	switch {
	case capacity > total:
		return fail(CheckDiskSpace, "capacity %s is more than the whole file system (%s)", size(capacity), size(total))
	case capacity > free:
		return warn(CheckDiskSpace, "%s free of %s, less than the capacity %s: puts beyond the free space end Declined", size(free), size(total), size(capacity))
	case capacity == 0:
		return ok(CheckDiskSpace, "%s free of %s; no capacity set, so the disk's free space is the limit", size(free), size(total))
	}
	return ok(CheckDiskSpace, "%s free of %s, room for the capacity %s", size(free), size(total), size(capacity))
}

// checkDirectIO probes O_DIRECT in dir.
func checkDirectIO(dir string, wanted bool) Finding {
	err := diskdrv.DirectIOWorks(dir)
	switch {
	case !wanted && err == nil:
		return ok(CheckDirectIO, "the file system takes O_DIRECT, but direct_io = false: every row goes through the page cache")
	case !wanted:
		return ok(CheckDirectIO, "direct_io = false: every row goes through the page cache (nor does the file system take O_DIRECT: %v)", err)
	case err != nil:
		return warn(CheckDirectIO, "the file system does not take O_DIRECT, so every row goes through the page cache: %v", err)
	}
	return ok(CheckDirectIO, "the file system takes O_DIRECT: rows whose memory and size are 4 KiB-aligned bypass the page cache")
}
