package contract

// View is what a lease holder submits: the rows to move, in groups. Every
// row is one whole slot plus the name its store key is built from. The
// backend references a view's slices and does not copy them: the caller
// must not modify them until the attempt's outcome is known.
type View struct {
	Groups []Group
}

// Group is a run of rows in one region (one layer group, say). Slots and
// Names have one entry per row and must be of equal length. A name may
// appear twice in a group, at two slots; the backend then moves it in two
// driver calls, since a [RowBatch] never carries a key twice.
type Group struct {
	// Region is the index of the region in the list the binding was built
	// from.
	Region int
	// Slots holds each row's slot in that region.
	Slots []int32
	// Names holds each row's name: opaque, non-empty bytes.
	Names [][]byte
}

// Rows returns the number of rows in the view.
func (v View) Rows() int {
	n := 0
	for _, g := range v.Groups {
		n += len(g.Slots)
	}
	return n
}

// ResumeBound returns how many leading rows of every group arrived, for a
// view laid out as one group per layer with the same blocks in each: the
// minimum over the groups of each group's delivered prefix (the rows of
// o are in view order). A block is usable only when every layer of it
// arrived, so a gap in any one layer bounds them all, where
// [Outcome.Prefix] would count the first layer whole. A view without
// groups has bound 0; rows o does not cover count as undelivered.
func (v View) ResumeBound(o Outcome) int {
	return v.bound(func(row int) bool { return row < len(o.Delivered) && o.Delivered[row] })
}

// PresentBound is ResumeBound for a lookup: the minimum over the view's
// groups of each group's Present prefix, rows being each row's presence
// in view order (rows it does not cover count as not Present).
func (v View) PresentBound(rows []Presence) int {
	return v.bound(func(row int) bool { return row < len(rows) && rows[row] == Present })
}

// Cut returns the view cut to each group's first n rows (all of a group
// shorter than n): the rows a lookup found, for a fetch of
// v.Cut(result.Bound). The view shares v's slices. A negative n is 0.
// The outcome of an attempt on the cut view is in the cut view's order:
// read it with that view (cut.ResumeBound(out)), not with v.
func (v View) Cut(n int) View {
	return v.each(func(rows int) (int, int) { return 0, min(max(n, 0), rows) })
}

// Rest returns the rows Cut(n) leaves out: each group's rows from n on
// (none of a group of n rows or fewer), the blocks an engine computes
// after fetching v.Cut(n). The view shares v's slices.
func (v View) Rest(n int) View {
	return v.each(func(rows int) (int, int) { return min(max(n, 0), rows), rows })
}

// each returns the view whose groups keep rows [lo, hi) of v's, span
// giving lo and hi for a group of that many rows.
func (v View) each(span func(rows int) (lo, hi int)) View {
	out := View{Groups: make([]Group, len(v.Groups))}
	for i, g := range v.Groups {
		lo, hi := span(max(len(g.Slots), len(g.Names)))
		out.Groups[i] = Group{Region: g.Region, Slots: clip(g.Slots, lo, hi), Names: clip(g.Names, lo, hi)}
	}
	return out
}

// clip is s[lo:hi] bounded by s's length (a lookup's group may carry
// names alone, without slots).
func clip[T any](s []T, lo, hi int) []T {
	return s[min(lo, len(s)):min(hi, len(s)):min(hi, len(s))]
}

// bound is the minimum over groups of the number of leading rows of each
// for which has (given the row's view-order index) is true; 0 without
// groups.
func (v View) bound(has func(row int) bool) int {
	if len(v.Groups) == 0 {
		return 0
	}
	bound, base := -1, 0
	for _, g := range v.Groups {
		rows := max(len(g.Slots), len(g.Names)) // a lookup's view may carry names alone
		n := 0
		for n < rows && has(base+n) {
			n++
		}
		if bound < 0 || n < bound {
			bound = n
		}
		base += rows
	}
	return bound
}

// Hint is an opaque value a fetch passes to every get of a driver that
// declares [Capabilities.Hints]. A nil Hint is "no hint".
type Hint any

// Destination is reserved for stores that place objects. It must be nil
// for now; a publish with a non-nil destination is refused.
type Destination any
