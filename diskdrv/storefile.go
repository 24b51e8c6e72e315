package diskdrv

import (
	"log/slog"

	"github.com/kvshare/kvshare/storeconfig"
	"github.com/kvshare/kvshare/storeconfig/tomlfile"
)

// StoreFile is one disk store file: the backend's [blob] settings and
// the [disk] section.
type StoreFile struct {
	// File is the path the file was read from (for error messages).
	File string
	Blob storeconfig.Blob
	Disk storeconfig.Disk
}

// LoadStoreFile reads and checks the store file at path: [blob] and
// [disk] (required), strictly. Every refusal is a [*storeconfig.Error]
// naming the file, the section and the key; several are joined.
func LoadStoreFile(path string) (StoreFile, error) {
	f := tomlfile.Read(path, nil)
	sf := StoreFile{File: path, Blob: f.Blob()}
	if f.Parsed() && !f.Has(storeconfig.DiskSection) {
		f.Refuse(storeconfig.DiskSection, "", "is required: a disk store file holds a [disk] section")
	}
	sf.Disk = f.Disk()
	if err := f.Finish(); err != nil {
		return StoreFile{}, err
	}
	return sf, nil
}

// Options are the store options the [disk] section gives (its
// durability checked already).
func (sf StoreFile) Options(logger *slog.Logger) Options {
	d := sf.Disk.WithDefaults()
	dur, _ := ParseDurability(d.Durability)
	return Options{Capacity: d.Capacity, Evict: d.Evict, Durability: dur, NoDirectIO: !d.DirectIO, Logger: logger}
}

// DriverOptions are the driver options the [disk] and [blob] sections
// give.
func (sf StoreFile) DriverOptions(logger *slog.Logger) DriverOptions {
	return DriverOptions{Workers: sf.Disk.WithDefaults().Workers, CallRows: sf.Blob.RowsPerCall, Logger: logger}
}

// OpenFile reads the store file at path and opens the store it names.
func OpenFile(path string, logger *slog.Logger) (*Store, StoreFile, error) {
	sf, err := LoadStoreFile(path)
	if err != nil {
		return nil, StoreFile{}, err
	}
	s, err := Open(sf.Disk.Dir, sf.Options(logger))
	if err != nil {
		return nil, StoreFile{}, err
	}
	return s, sf, nil
}
