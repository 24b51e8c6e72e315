package roundtrip

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/diskdrv"
)

// DiskStore is the disk tier: one diskdrv store over the directory a
// [disk] section names, shared by a diskdrv driver per lender.
type DiskStore struct {
	store  *diskdrv.Store
	file   diskdrv.StoreFile
	logger *slog.Logger
}

// DiskStoreFile reads the store file at path, one of the disk tier
// ([blob] and [disk]; every refusal names the file, the section and the
// key), and opens the store it names (taking its directory's lock).
func DiskStoreFile(path string, logger *slog.Logger) (*DiskStore, error) {
	s, sf, err := diskdrv.OpenFile(path, logger)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &DiskStore{store: s, file: sf, logger: logger}, nil
}

// Describe names the store: its directory, how rows move, its limit.
func (d *DiskStore) Describe() string {
	io := "direct I/O for page-aligned rows"
	if !d.store.DirectIO() {
		io = "the page cache"
	}
	limit := "no limit but the disk's"
	if c := d.file.Disk.Capacity; c > 0 {
		limit = "a limit of " + bytesText(c)
		if d.file.Disk.Evict {
			limit += ", least recently used evicted"
		}
	}
	_, n := d.store.Used()
	return fmt.Sprintf("the disk tier in %s (%s, durability %s, %s; %d objects at open)",
		d.store.Dir(), io, d.file.Disk.WithDefaults().Durability, limit, n)
}

// Workers is the worker goroutines of each driver.
func (d *DiskStore) Workers() int { return d.file.Disk.WithDefaults().Workers }

// OpenDriver opens a diskdrv driver over the store.
func (d *DiskStore) OpenDriver(context.Context, string) (contract.Driver, error) {
	return diskdrv.New(d.store, d.file.DriverOptions(d.logger)), nil
}

// Configure points cfg at the store and takes the file's [blob]
// settings.
func (d *DiskStore) Configure(cfg *Config) {
	cfg.Store = d
	cfg.Workers = d.Workers()
	if d.file.Blob.KeyPrefix != "" {
		cfg.KeyPrefix = d.file.Blob.KeyPrefix
	}
	cfg.RowsPerCall = d.file.Blob.RowsPerCall
	cfg.BytesPerCall = d.file.Blob.BytesPerCall
}

// Close releases the directory's lock; the objects stay on disk.
func (d *DiskStore) Close() error { return d.store.Close() }
