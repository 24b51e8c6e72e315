package memdrv

import (
	"log/slog"

	"github.com/kvshare/kvshare/contract"
)

// Options shape a driver: what it declares, and how many workers it runs.
type Options struct {
	// Put and Get are the directions served; both false means both true.
	Put, Get bool
	// DeviceMemory accepts Device regions (memdrv treats them as host
	// memory; see [Alloc]).
	DeviceMemory bool
	// Hints accepts non-nil hints on Get. memdrv ignores a hint's value
	// but counts it (see [Driver.HintsSeen]).
	Hints bool
	// MultiSpan accepts rows of more than one span; a row's object is its
	// spans' bytes in order.
	MultiSpan bool
	// MaxRowsPerOp caps the rows of one call; 0 (or less) means no cap.
	MaxRowsPerOp int
	// Workers is the number of worker goroutines; 0 (or less) means 2.
	// 1 is a valid driver that runs rows strictly in FIFO order.
	Workers int
	// NoCancel makes the driver not declare Capabilities.Cancel:
	// Operation.Cancel then does nothing.
	NoCancel bool
	// NoAbsentIsMiss makes the driver not declare
	// Capabilities.AbsentIsMiss, and act as a store that cannot tell an
	// absent key from a failed read: a get of an absent key ends Fault
	// (its slot untouched, its access Ended) instead of Miss.
	NoAbsentIsMiss bool
	// Logger receives the driver's logs (panics recovered in workers and
	// callbacks); nil means slog.Default().
	Logger *slog.Logger
}

// capabilities returns what a driver built with o declares.
func (o Options) capabilities() contract.Capabilities {
	c := contract.Capabilities{
		Put:          o.Put,
		Get:          o.Get,
		Cancel:       !o.NoCancel,
		AbsentIsMiss: !o.NoAbsentIsMiss,
		DeviceMemory: o.DeviceMemory,
		MultiSpan:    o.MultiSpan,
		Hints:        o.Hints,
		MaxRowsPerOp: max(o.MaxRowsPerOp, 0),
		// Lookup tells a key being written from an absent one.
		LookupInFlight: true,
	}
	if !c.Put && !c.Get {
		c.Put, c.Get = true, true
	}
	return c
}

// Direction is the direction of a row: a put (slot to store) or a get
// (store to slot). It is [contract.Direction], kept under memdrv's name
// so that callers of the scenario hooks need not change.
type Direction = contract.Direction

const (
	// PutDir is a put: the slot is read and the store written.
	PutDir = contract.PutDir
	// GetDir is a get: the store is read and the slot written.
	GetDir = contract.GetDir
)

// mustBeValid panics on a direction that is neither PutDir nor GetDir: a
// scenario hook given one is a bug in the test that called it.
func mustBeValid(d Direction) {
	if !d.Valid() {
		panic("memdrv: " + d.String() + " is not a direction")
	}
}
