package storeconfig

import (
	"path/filepath"
	"slices"
)

// Disk is the [disk] section: the settings of the disk tier, a store of
// one file per object in a local directory (module diskdrv). A store
// file that holds it, and no other store's section, is for that store;
// every store-file reader knows the section and checks it.
type Disk struct {
	// Dir (dir, required) is the store's directory, an absolute path;
	// it is created when missing.
	Dir string
	// Capacity (capacity, required) is the most bytes the objects take
	// on disk, a 4 KiB header page each included; 0 means no limit but
	// the disk's.
	Capacity int64
	// Evict (evict) makes room for a put beyond the capacity by removing
	// the least recently used objects; without it the put is Declined.
	Evict bool
	// Durability (durability) says when a put syncs: "full" (left out:
	// the file and its directory), "data" (the file), "none".
	Durability string
	// DirectIO (direct_io, default true) lets rows whose memory is
	// page-aligned bypass the page cache.
	DirectIO bool
	// Workers (workers) is the worker goroutines of each driver over the
	// store, up to MaxDiskWorkers; 0 (or left out) means
	// DefaultDiskWorkers, as in diskdrv.DriverOptions.
	Workers int
}

// The keys of the [disk] section, as a file spells them.
const (
	DiskSection   = "disk"
	KeyDir        = "dir"
	KeyEvict      = "evict"
	KeyDurability = "durability"
	KeyDirectIO   = "direct_io"
)

// DiskKeys lists the keys of the [disk] section.
var DiskKeys = []string{KeyDir, KeyCapacity, KeyEvict, KeyDurability, KeyDirectIO, KeyWorkers}

// The values of durability.
const (
	DurabilityFull = "full"
	DurabilityData = "data"
	DurabilityNone = "none"
)

// Durabilities lists the values durability takes.
var Durabilities = []string{DurabilityFull, DurabilityData, DurabilityNone}

// The ranges and defaults of the [disk] section.
const (
	MaxDiskCapacity    = 1 << 56 // 64 PiB
	MaxDiskWorkers     = 1024
	DefaultDiskWorkers = 4
)

// WithDefaults returns d with an empty Durability made "full" and
// Workers 0 made DefaultDiskWorkers.
func (d Disk) WithDefaults() Disk {
	if d.Durability == "" {
		d.Durability = DurabilityFull
	}
	if d.Workers == 0 {
		d.Workers = DefaultDiskWorkers
	}
	return d
}

// Validate checks d's values (the defaults filled in): each refusal an
// [*Error] naming the section and key; several are joined.
func (d Disk) Validate(file string) error { return d.Check(file).Err() }

// Check is Validate's refusals, one by one.
func (d Disk) Check(file string) Findings {
	d = d.WithDefaults()
	var errs Findings
	switch {
	case d.Dir == "":
		errs.Addf(file, DiskSection, KeyDir, "is required: the store's directory, an absolute path")
	case !filepath.IsAbs(d.Dir):
		errs.Addf(file, DiskSection, KeyDir, "must be an absolute path, got %q", d.Dir)
	}
	errs.InRange(file, DiskSection, KeyCapacity, d.Capacity, 0, MaxDiskCapacity)
	if !slices.Contains(Durabilities, d.Durability) {
		errs.Addf(file, DiskSection, KeyDurability, "must be one of %q, %q, %q, got %q", DurabilityFull, DurabilityData, DurabilityNone, d.Durability)
	}
	errs.InRangeOrDefault(file, DiskSection, KeyWorkers, int64(d.Workers), MaxDiskWorkers, DefaultDiskWorkers)
	return errs
}
