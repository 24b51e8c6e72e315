package rowbatch

import "iter"

// Call is one driver call cut from a group: the group's rows [Start, End),
// End > Start. The indices are the rows' positions in the group as the
// caller gave them, so each row's place in the view is kept.
type Call struct {
	Start, End int
}

// Len returns the number of rows of the call, End-Start.
func (c Call) Len() int { return c.End - c.Start }

// Cut cuts one group's rows into driver calls. names holds the name of
// each row in the group's order (a key maker turns equal names, and only
// equal names, into equal keys, so a repeated name is a repeated key);
// every row is rowBytes long (rows are whole slots of one region).
//
// The calls cover every row exactly once, in order, each call starting
// where the previous one ended. A call ends before the row that would
// take it past caps.MaxRows rows or caps.MaxBytes bytes, and before a row
// whose name it already carries; a single row longer than caps.MaxBytes
// goes alone. Every call is as long as these rules allow, which also
// makes the calls as few as they can be. A cap that is zero or negative
// bounds nothing, and so does the byte cap when rowBytes is zero or
// negative. Names are compared byte for byte: an empty name is a name
// like any other (the driver's [Check] refuses it).
//
// An empty names slice yields no call. The sequence may be ranged over
// again, cutting anew each time; names must not change while a range
// runs. A range allocates at most once: a table of 16 to 32 bytes per row
// of the longest call the caps allow, made only when a call grows past 8
// rows. A [Cutter] keeps that table from one group to the next and
// allocates nothing once it has it.
func Cut(names [][]byte, rowBytes int64, caps Caps) iter.Seq[Call] {
	return func(yield func(Call) bool) {
		var c Cutter
		c.Reset(names, rowBytes, caps)
		for {
			call, ok := c.Next()
			if !ok || !yield(call) {
				return
			}
		}
	}
}

// Cutter cuts groups one call at a time, by the rules of [Cut], keeping
// its table of names from one group to the next: once it has cut a group
// as long as the longest call the caps allow, it allocates nothing. The
// zero Cutter is ready; call Reset before each group. A Cutter is not
// safe for concurrent use: a backend keeps one per submission in pooled
// scratch.
type Cutter struct {
	set   nameset
	limit int // rows per call, 0 for any
	start int // first row of the next call
}

// Reset starts cutting names, as [Cut] would. names must not change until
// the last call of the group was returned.
func (c *Cutter) Reset(names [][]byte, rowBytes int64, caps Caps) {
	c.limit = caps.RowsPerCall(rowBytes)
	longest := len(names)
	if c.limit > 0 && c.limit < longest {
		longest = c.limit
	}
	c.set.reset(names, longest)
	c.start = 0
}

// Next returns the next call of the group, and false once every row has
// been returned.
func (c *Cutter) Next() (Call, bool) {
	s := &c.set
	n := len(s.names)
	if c.start >= n {
		return Call{}, false
	}
	last := n
	if n-c.start > s.longest {
		last = c.start + s.longest
	}
	s.restart(c.start)
	s.grow(last)
	call := Call{Start: c.start, End: s.end}
	c.start = s.end
	return call, true
}
