package rowbatch

import (
	"errors"
	"fmt"
	"math"
)

// ErrBadCaps is wrapped by every error [Caps.Validate] returns.
var ErrBadCaps = errors.New("rowbatch: bad caps")

// Caps bounds one driver call. A field that is zero or negative sets no
// bound; [Caps.Validate] tells a configuration that wrote a negative
// value by mistake apart from one that wrote none.
type Caps struct {
	// MaxRows is the most rows one call may carry.
	MaxRows int
	// MaxBytes is the most bytes one call may carry. A single row larger
	// than MaxBytes still gets a call of its own.
	MaxBytes int64
}

// Validate reports a negative field: the error wraps [ErrBadCaps] and
// names the field and its value. Zero is valid and means "no cap".
// [Cut] never calls Validate; it treats negative fields as zero.
func (c Caps) Validate() error {
	switch {
	case c.MaxRows < 0:
		return fmt.Errorf("%w: MaxRows is %d, want >= 0 (0 = no cap)", ErrBadCaps, c.MaxRows)
	case c.MaxBytes < 0:
		return fmt.Errorf("%w: MaxBytes is %d, want >= 0 (0 = no cap)", ErrBadCaps, c.MaxBytes)
	}
	return nil
}

// Tighter returns, field by field, the stricter of c and o: the smaller
// positive value, or the one positive value, or 0 (no cap) when neither
// field is positive. The result never holds a negative field. The backend
// uses it to combine a driver's [contract.Capabilities.MaxRowsPerOp] with
// its own caps:
//
//	caps := own.Tighter(rowbatch.Caps{MaxRows: drv.Capabilities().MaxRowsPerOp})
func (c Caps) Tighter(o Caps) Caps {
	return Caps{MaxRows: tighter(c.MaxRows, o.MaxRows), MaxBytes: tighter(c.MaxBytes, o.MaxBytes)}
}

func tighter[T int | int64](a, b T) T {
	switch {
	case a <= 0:
		return max(b, 0)
	case b <= 0:
		return a
	}
	return min(a, b)
}

// RowsPerCall returns the most rows one call may carry when every row is
// rowBytes long, or 0 when nothing bounds it. It is the row cap, tightened
// by the byte cap when both MaxBytes and rowBytes are positive; a row
// larger than the byte cap still fits alone, so the answer is never below
// 1 once either cap applies. With it a holder can bound what one call
// keeps lent: RowsPerCall(rowBytes)*rowBytes bytes at most.
func (c Caps) RowsPerCall(rowBytes int64) int {
	rows := max(c.MaxRows, 0)
	if c.MaxBytes <= 0 || rowBytes <= 0 {
		return rows
	}
	byBytes := max(c.MaxBytes/rowBytes, 1)
	if byBytes > math.MaxInt {
		// More rows than a slice can hold: the byte cap never bites.
		return rows
	}
	if rows == 0 || int(byBytes) < rows {
		return int(byBytes)
	}
	return rows
}
