package diskdrv

import (
	"fmt"
	"log/slog"
)

// Durability says when a put's bytes are forced to the disk (fsync).
type Durability int

const (
	// Full (the default) syncs the object file before its rename and
	// the directory after it: a put that ended Ready survives a power
	// loss. It costs two flushes of the device's cache per put.
	Full Durability = iota
	// Data syncs the object file before its rename, not the directory:
	// an object is never torn, even after a power loss, but one put
	// just before the loss may be absent. One flush per put.
	Data
	// None never syncs: a killed process leaves every object whole or
	// absent (the page cache outlives it), a power loss may leave
	// recent objects absent or, on some file systems, empty — the open
	// after it drops those. No flush.
	None
)

// String names the setting as a store file spells it.
func (d Durability) String() string {
	switch d {
	case Full:
		return "full"
	case Data:
		return "data"
	case None:
		return "none"
	}
	return fmt.Sprintf("Durability(%d)", int(d))
}

// ParseDurability reads "full", "data" or "none".
func ParseDurability(s string) (Durability, error) {
	for _, d := range []Durability{Full, Data, None} {
		if d.String() == s {
			return d, nil
		}
	}
	return 0, fmt.Errorf("diskdrv: durability must be \"full\", \"data\" or \"none\", got %q", s)
}

// Options shape a store: its directory's limit, what it does when full,
// when it syncs, and whether it may bypass the page cache.
type Options struct {
	// Capacity is the most bytes the store's objects take on disk
	// (each object's header page included); 0 means no limit but the
	// disk's.
	Capacity int64
	// Evict makes a put that would pass Capacity remove the least
	// recently used objects to make room; without it such a put is
	// Declined.
	Evict bool
	// Durability says when a put syncs (default Full).
	Durability Durability
	// NoDirectIO keeps every transfer in the page cache, even one whose
	// memory and size are aligned for direct I/O.
	NoDirectIO bool
	// Seam, when set, is asked before every file operation of a row and
	// may fail it, shorten it or hold it (see [Seam]). Tests stage disk
	// faults through it; nil is the plain disk.
	Seam Seam
	// Logger receives the store's logs (objects dropped at open); nil
	// means slog.Default().
	Logger *slog.Logger
}

// DriverOptions shape a driver over a store.
type DriverOptions struct {
	// Workers is the worker goroutines of the driver (calls the disk
	// serves at once); 0 (or less) means 4.
	Workers int
	// CallRows is the most rows of one store call; 0 (or less) means 1:
	// each row a call, so that the workers keep as many rows in flight
	// on the device as there are workers.
	CallRows int
	// Logger receives the driver's logs; nil means the store's.
	Logger *slog.Logger
}
