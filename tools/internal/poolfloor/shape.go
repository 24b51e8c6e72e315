package poolfloor

import (
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/storeconfig"
)

// ErrShape is wrapped by every refusal of a [Shape].
var ErrShape = errors.New("poolfloor: bad floor shape")

// Shape is a floor of the same shape as a job: its rows and their size,
// the rows of one submitted view, the caps of one call (the driver's,
// each lowered to the backend's where that is tighter) and the
// goroutines making calls (as many as the driver has calls of one
// direction in the store at once: its workers, or calls_in_flight
// where that is fewer).
type Shape struct {
	Rows         int
	RowBytes     int64
	ViewRows     int
	RowsPerCall  int
	BytesPerCall int64
	Workers      int
}

// ShapeOf is the floor of a job moving rows of rowBytes in views of
// viewRows through a Mooncake driver of the [mooncake] section m (its
// defaults filled in) under a backend of the [blob] section b.
func ShapeOf(rows int, rowBytes int64, viewRows int, m mooncakesdk.MooncakeConfig, b storeconfig.Blob) Shape {
	d := mooncakedrv.ConfigFrom(m)
	s := Shape{Rows: rows, RowBytes: rowBytes, ViewRows: viewRows,
		RowsPerCall: d.RowsPerCall, BytesPerCall: d.BytesPerCall, Workers: d.Workers}
	if s.Workers == 0 {
		s.Workers = mooncakesdk.DefaultWorkers
	}
	if d.CallsInFlight > 0 {
		s.Workers = min(s.Workers, d.CallsInFlight)
	}
	if s.RowsPerCall == 0 {
		s.RowsPerCall = mooncakesdk.DefaultRowsPerCall
	}
	if s.BytesPerCall == 0 {
		s.BytesPerCall = mooncakesdk.DefaultBytesPerCall
	}
	if b.RowsPerCall > 0 {
		s.RowsPerCall = min(s.RowsPerCall, b.RowsPerCall)
	}
	if b.BytesPerCall > 0 {
		s.BytesPerCall = min(s.BytesPerCall, b.BytesPerCall)
	}
	return s
}

// Validate names the first field out of range.
func (s Shape) Validate() error {
	switch {
	case s.Rows <= 0:
		return fmt.Errorf("%w: rows is %d, want > 0", ErrShape, s.Rows)
	case s.RowBytes <= 0:
		return fmt.Errorf("%w: row bytes is %d, want > 0", ErrShape, s.RowBytes)
	case s.RowBytes > 1<<40/int64(s.Rows):
		return fmt.Errorf("%w: rows*row bytes is over 1 TiB (%d*%d)", ErrShape, s.Rows, s.RowBytes)
	case s.ViewRows <= 0:
		return fmt.Errorf("%w: view rows is %d, want > 0", ErrShape, s.ViewRows)
	case s.RowsPerCall <= 0:
		return fmt.Errorf("%w: rows per call is %d, want > 0", ErrShape, s.RowsPerCall)
	case s.BytesPerCall <= 0:
		return fmt.Errorf("%w: bytes per call is %d, want > 0", ErrShape, s.BytesPerCall)
	case s.Workers <= 0:
		return fmt.Errorf("%w: workers is %d, want > 0", ErrShape, s.Workers)
	}
	return nil
}

// Bytes is the bytes of every row.
func (s Shape) Bytes() int64 { return int64(s.Rows) * s.RowBytes }

// Prepare builds the shape's submission in direction dir: rows named
// names (as many as s.Rows) at addrs, keys built with stem.
func (s Shape) Prepare(dir contract.Direction, stem keys.Stem, names [][]byte, addrs []uintptr) (*Submission, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if len(names) != s.Rows || len(addrs) != s.Rows {
		return nil, fmt.Errorf("%w: %d names and %d addresses for %d rows", ErrShape, len(names), len(addrs), s.Rows)
	}
	for i, n := range names {
		if len(n) == 0 {
			return nil, fmt.Errorf("%w: name %d is empty", ErrShape, i)
		}
	}
	return Prepare(dir, stem, names, addrs, s.RowBytes, s.ViewRows, s.RowsPerCall, s.BytesPerCall), nil
}

// String says the shape: "1024 rows of 262144 B in views of 64, calls of
// at most 256 rows and 134217728 B, 4 goroutines".
func (s Shape) String() string {
	return fmt.Sprintf("%d rows of %d B in views of %d, calls of at most %d rows and %d B, %d goroutines",
		s.Rows, s.RowBytes, s.ViewRows, s.RowsPerCall, s.BytesPerCall, s.Workers)
}
