package rowbatch

import (
	"bytes"
	"hash/maphash"
)

// linearRows is the window length up to which nameset compares a name
// with every name of the window instead of hashing it. Measured with
// names shaped like an engine's (32-byte block hashes, see BenchmarkCut),
// a hashed lookup costs about as much as eight compares.
const linearRows = 8

// seed keys nameset's hashes. One random seed per process keeps a caller
// from choosing names that all land in one bucket.
var seed = maphash.MakeSeed()

// nameset answers, for a window of consecutive rows names[from:end),
// whether the row at end repeats a name of the window. The window grows
// one row at a time at its end and restarts further on; it never moves
// back.
//
// Short windows are scanned. Once a window reaches linearRows rows its
// rows go into an open-addressing table (linear probing, load at most one
// half) that is allocated once, sized for the longest window, and reused
// by every later window without clearing: an entry for a row before the
// window's start counts as empty. That is sound because an entry never
// turns stale while its window lives, so a probe that stops at the first
// empty or stale slot has passed every slot a live name could occupy.
// [nameset.reset] moves to another list of names; it clears the table
// (its entries index the old list) only if a window used it.
type nameset struct {
	names   [][]byte
	longest int // the most rows a window can hold; sizes the table

	from, end int // the window: names[from:end)
	indexed   int // rows [from, indexed) are in slots; from when none are

	// slots holds 0 for empty, else tag<<rowBits | (row+1), tag being the
	// hash's top bits. row+1 < 1<<rowBits always holds: a slice that long
	// would not fit in a Go heap (at most 1<<48 bytes).
	slots []uint64
	dirty bool // some entry of slots indexes the current names
}

const (
	rowBits = 48
	rowMask = 1<<rowBits - 1
)

// reset makes the set answer for names, in windows of at most longest
// rows, keeping its table when it is large enough.
func (s *nameset) reset(names [][]byte, longest int) {
	s.names, s.longest = names, longest
	s.from, s.end, s.indexed = 0, 0, 0
	if s.dirty {
		clear(s.slots)
		s.dirty = false
	}
	if len(s.slots) < tableSize(longest) {
		s.slots = nil // allocated when a window first needs it
	}
}

// tableSize is the number of table slots for windows of longest rows: a
// power of two at least twice that.
func tableSize(longest int) int {
	size := 4
	for size < 2*longest {
		size <<= 1
	}
	return size
}

// restart begins a new window holding only row from. from must be at or
// past the end of the previous window.
func (s *nameset) restart(from int) {
	s.from, s.end, s.indexed = from, from+1, from
}

// repeats reports whether names[s.end] repeats a name of the window, and
// if so the first row of the window holding it. Otherwise it grows the
// window by that row. s.end must be a row of names, and the window must
// hold fewer than longest rows.
func (s *nameset) repeats() (int, bool) {
	i := s.end
	name := s.names[i]
	if i-s.from < linearRows {
		for j := s.from; j < i; j++ {
			if sameName(s.names[j], name) {
				return j, true
			}
		}
		s.end++
		return -1, false
	}
	if s.slots == nil {
		s.slots = make([]uint64, tableSize(s.longest))
	}
	s.dirty = true
	for ; s.indexed < i; s.indexed++ {
		// The window's first rows are distinct: the scan checked them.
		s.place(s.indexed)
	}
	if j, ok := s.place(i); ok {
		return j, true
	}
	s.indexed++
	s.end++
	return -1, false
}

// place looks row i's name up among the window's indexed rows and returns
// the row holding it; if none does, it indexes row i.
func (s *nameset) place(i int) (int, bool) {
	name := s.names[i]
	h := maphash.Bytes(seed, name)
	tag := h >> rowBits << rowBits
	mask := uint64(len(s.slots) - 1)
	for p := h & mask; ; p = (p + 1) & mask {
		e := s.slots[p]
		row := int(e&rowMask) - 1
		if row < s.from { // empty (row -1) or left by an earlier window
			s.slots[p] = tag | uint64(i+1)
			return -1, false
		}
		if e&^rowMask == tag && sameName(s.names[row], name) {
			return row, true
		}
	}
}

// sameName reports whether a and b are equal. Names of one group (block
// hashes, or counters behind a common stem) differ mostly near their
// end, so comparing the last byte first skips most full compares.
func sameName(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || a[len(a)-1] == b[len(b)-1]) && bytes.Equal(a, b)
}
