package rowbatch

import (
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// ErrBadBatch is wrapped by every error [Check] returns. A driver refusing
// a batch wraps it in [contract.ErrDriverRejected] as well.
var ErrBadBatch = errors.New("rowbatch: bad batch")

// Check is the admission check a driver runs on a batch before it records
// anything: the batch has rows; every row has a non-empty key that no
// other row of the batch carries; every row has at least one span, and
// exactly one unless multiSpan; every span has a positive length and lies
// wholly inside one of the live registrations. The error names the row,
// its key and the span at fault.
//
// Check allocates only for batches of more than 32 rows (a set of keys).
func Check(b contract.RowBatch, live []contract.SlotRegion, multiSpan bool) error {
	if len(b.Rows) == 0 {
		return fmt.Errorf("%w: no rows", ErrBadBatch)
	}
	var seen map[string]int
	if len(b.Rows) > 32 {
		seen = make(map[string]int, len(b.Rows))
	}
	for i, r := range b.Rows {
		if r.Key == "" {
			return fmt.Errorf("%w: row %d: empty key", ErrBadBatch, i)
		}
		if j, dup := firstKey(b.Rows[:i], r.Key, seen); dup {
			return fmt.Errorf("%w: row %d: key %q repeats row %d", ErrBadBatch, i, r.Key, j)
		}
		if seen != nil {
			seen[r.Key] = i
		}
		switch {
		case len(r.Spans) == 0:
			return fmt.Errorf("%w: row %d (key %q): no span", ErrBadBatch, i, r.Key)
		case len(r.Spans) > 1 && !multiSpan:
			return fmt.Errorf("%w: row %d (key %q): %d spans, driver takes one", ErrBadBatch, i, r.Key, len(r.Spans))
		}
		for k, s := range r.Spans {
			if s.Len <= 0 {
				return fmt.Errorf("%w: row %d (key %q) span %d: length %d", ErrBadBatch, i, r.Key, k, s.Len)
			}
			if !inside(s, live) {
				return fmt.Errorf("%w: row %d (key %q) span %d [%#x, %#x) lies in no live registration",
					ErrBadBatch, i, r.Key, k, s.Addr, s.End())
			}
		}
	}
	return nil
}

// firstKey finds key among rows, through seen when there is one.
func firstKey(rows []contract.Row, key string, seen map[string]int) (int, bool) {
	if seen != nil {
		j, ok := seen[key]
		return j, ok
	}
	for j, r := range rows {
		if r.Key == key {
			return j, true
		}
	}
	return -1, false
}

func inside(s contract.Span, live []contract.SlotRegion) bool {
	for _, r := range live {
		if r.Contains(s) {
			return true
		}
	}
	return false
}
