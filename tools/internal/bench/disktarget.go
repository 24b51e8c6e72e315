package bench

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/diskdrv"
	"github.com/kvshare/kvshare/tools/internal/runprefix"
)

// diskTarget is where measurement 9 runs: the store's directory (the
// store file's, or one in a temporary directory), the floor's folder
// beside it on the same file system, the store's and the driver's
// options, and the backend's settings with the run's key prefix.
type diskTarget struct {
	dir, floorDir string
	// where says which directory it is, floorAt where the floor's
	// files are, for the report.
	where, floorAt string
	store          diskdrv.Options
	driver         diskdrv.DriverOptions
	cfg            binding.Config
	// remove removes what the run made: the temporary directory, or
	// the floor's folder beside a given store's.
	remove func() error
}

// openDiskTarget reads the store file StorePath, or makes a temporary
// directory holding the store's directory and the floor's folder (the
// store's durability none, as a cache's). The floor's folder beside a
// given store's directory is a sibling on the same file system, or a
// folder inside the store's directory when the parent is elsewhere or
// takes no folder.
func openDiskTarget(o diskOptions, logger *slog.Logger) (*diskTarget, error) {
	t := &diskTarget{}
	base := ""
	if o.StorePath == "" {
		tmp, err := os.MkdirTemp("", "kvshare-bench-disk-")
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		t.remove = func() error { return os.RemoveAll(tmp) }
		t.dir, t.floorDir = filepath.Join(tmp, "store"), filepath.Join(tmp, "floor")
		if err := os.Mkdir(t.floorDir, 0o755); err != nil {
			return nil, errors.Join(fmt.Errorf("bench: %w", err), t.remove())
		}
		t.where = "a temporary directory, " + t.dir + " (durability none)"
		t.floorAt = "a sibling folder, " + t.floorDir
		t.store = diskdrv.Options{Durability: diskdrv.None, Logger: logger}
		t.driver = diskdrv.DriverOptions{Logger: logger}
	} else {
		sf, err := diskdrv.LoadStoreFile(o.StorePath)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		t.dir, base = sf.Disk.Dir, sf.Blob.KeyPrefix
		t.where = fmt.Sprintf("the directory of %s, %s (durability %s)", o.StorePath, t.dir, sf.Disk.WithDefaults().Durability)
		t.store, t.driver, t.cfg = sf.Options(logger), sf.DriverOptions(logger), binding.FromBlob(sf.Blob)
		if err := os.MkdirAll(t.dir, 0o755); err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		if t.floorDir, t.floorAt, err = floorBeside(t.dir); err != nil {
			return nil, err
		}
		t.remove = func() error { return os.RemoveAll(t.floorDir) }
	}
	prefix, err := runprefix.New(base, "bench")
	if err != nil {
		return nil, errors.Join(fmt.Errorf("bench: %w", err), t.remove())
	}
	t.cfg.KeyPrefix = prefix
	return t, nil
}

// floorBeside makes the floor's folder for a store in dir: a sibling
// on dir's file system, else a folder inside dir. It says which.
func floorBeside(dir string) (path, at string, err error) {
	var st, sib unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return "", "", fmt.Errorf("bench: %s: %w", dir, err)
	}
	path, err = os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+"-bench-floor-")
	if err == nil && unix.Stat(path, &sib) == nil && sib.Dev == st.Dev {
		return path, "a sibling folder on the same file system, " + path, nil
	}
	if err == nil {
		_ = os.Remove(path)
	}
	path, err = os.MkdirTemp(dir, "bench-floor-")
	if err != nil {
		return "", "", fmt.Errorf("bench: the floor's folder: %w", err)
	}
	return path, "a folder inside the store's directory (its parent is on another file system or takes no folder), " + path, nil
}
