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

// Cut cuts one group's rows into driver calls. keys holds the store key
// of each row in the group's order; every row is rowBytes long (rows are
// whole slots of one region).
//
// The calls cover every row exactly once, in order, each call starting
// where the previous one ended. A call ends before the row that would
// take it past caps.MaxRows rows or caps.MaxBytes bytes, and before a row
// whose key it already carries; a single row longer than caps.MaxBytes
// goes alone. Every call is as long as these rules allow, which also
// makes the calls as few as they can be. A cap that is zero or negative
// bounds nothing, and so does the byte cap when rowBytes is zero or
// negative. Keys are compared as they are: an empty key is a key like any
// other (the driver's [Check] refuses it).
//
// An empty keys slice yields no call. The sequence may be ranged over
// again, cutting anew each time; keys must not change while a range runs.
// A range allocates at most once: a table of 16 to 32 bytes per row of
// the longest call the caps allow, made only when a call grows past 8
// rows; a range whose calls all stay within 8 rows (under a cap of 8
// rows or fewer, say) allocates nothing.
func Cut(keys []string, rowBytes int64, caps Caps) iter.Seq[Call] {
	limit := caps.RowsPerCall(rowBytes)
	return func(yield func(Call) bool) {
		cut(keys, limit, yield)
	}
}

// cut yields the calls of keys with at most limit rows each (0: any).
func cut(keys []string, limit int, yield func(Call) bool) {
	n := len(keys)
	longest := n
	if limit > 0 && limit < n {
		longest = limit
	}
	set := keyset{keys: keys, longest: longest}
	for start := 0; start < n; {
		last := n
		if n-start > longest {
			last = start + longest
		}
		set.restart(start)
		for set.end < last {
			if _, dup := set.repeats(); dup {
				break
			}
		}
		if !yield(Call{Start: start, End: set.end}) {
			return
		}
		start = set.end
	}
}
