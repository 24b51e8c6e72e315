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
// anything: the batch has rows and a key maker; every row has a non-empty
// name that the key maker has a key for and that no other row of the
// batch carries; every row has at least one span, and exactly one unless
// multiSpan; every span has a positive length and lies wholly inside one
// of the live registrations. The error names the row, its key (or name,
// when it has no key) and the span at fault.
//
// Check allocates a table of names for a batch of more than 8 rows; a
// driver that checks many batches keeps a [Checker] instead.
func Check(b contract.RowBatch, live []contract.SlotRegion, multiSpan bool) error {
	var c Checker
	return c.Check(b, live, multiSpan)
}

// Checker runs [Check] with a table of names it keeps from one batch to
// the next, so that once it has checked a batch as long as the next one
// it allocates nothing (except for the error of a bad batch). The zero
// Checker is ready. It is not safe for concurrent use: a driver keeps one
// under its admission lock, or one per goroutine.
type Checker struct {
	set   nameset
	names [][]byte // the rows' names, for set; cleared after each check
}

// Check is [Check], with the Checker's table.
func (c *Checker) Check(b contract.RowBatch, live []contract.SlotRegion, multiSpan bool) error {
	switch {
	case len(b.Rows) == 0:
		return fmt.Errorf("%w: no rows", ErrBadBatch)
	case b.Keys == nil:
		return fmt.Errorf("%w: no key maker (RowBatch.Keys is nil)", ErrBadBatch)
	}
	hashed := len(b.Rows) > linearRows
	// A long batch's first repeated row, found before the rows are
	// checked in order, in one run of the table over the whole batch.
	repeatAt, repeatOf := len(b.Rows), -1
	if hashed {
		c.names = c.names[:0]
		for i := range b.Rows { // by index: copying each Row costs more than its name
			c.names = append(c.names, b.Rows[i].Name)
		}
		c.set.reset(c.names, len(c.names))
		defer clear(c.names) // hold no caller memory between checks
		c.set.restart(0)
		if j, dup := c.set.grow(len(c.names)); dup {
			repeatAt, repeatOf = c.set.end, j
		}
	}
	for i := range b.Rows {
		r := &b.Rows[i]
		switch {
		case len(r.Name) == 0:
			return fmt.Errorf("%w: row %d: empty name", ErrBadBatch, i)
		case b.Keys.KeyLen(len(r.Name)) == 0:
			return fmt.Errorf("%w: row %d: the key maker has no key for a name of %d bytes (%x)", ErrBadBatch, i, len(r.Name), r.Name)
		}
		j, dup := repeatOf, i == repeatAt
		if !hashed {
			j, dup = repeated(b.Rows, i)
		}
		if dup {
			return fmt.Errorf("%w: row %d (key %q): name repeats row %d", ErrBadBatch, i, b.Key(i), j)
		}
		switch {
		case len(r.Spans) == 0:
			return fmt.Errorf("%w: row %d (key %q): no span", ErrBadBatch, i, b.Key(i))
		case len(r.Spans) > 1 && !multiSpan:
			return fmt.Errorf("%w: row %d (key %q): %d spans, driver takes one", ErrBadBatch, i, b.Key(i), len(r.Spans))
		}
		for k, s := range r.Spans {
			if s.Len <= 0 {
				return fmt.Errorf("%w: row %d (key %q) span %d: length %d", ErrBadBatch, i, b.Key(i), k, s.Len)
			}
			if !inside(s, live) {
				return fmt.Errorf("%w: row %d (key %q) span %d [%#x, %#x) lies in no live registration",
					ErrBadBatch, i, b.Key(i), k, s.Addr, s.End())
			}
		}
	}
	return nil
}

// repeated reports the earlier row whose name row i of a short batch
// repeats, by a scan (a long batch's first repeat is found by the table
// before the rows are checked).
func repeated(rows []contract.Row, i int) (int, bool) {
	for j := range i {
		if sameName(rows[j].Name, rows[i].Name) {
			return j, true
		}
	}
	return -1, false
}

func inside(s contract.Span, live []contract.SlotRegion) bool {
	for i := range live {
		if live[i].Contains(s) {
			return true
		}
	}
	return false
}
