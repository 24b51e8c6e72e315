package rowbatch

import (
	"bytes"
	"hash/maphash"
)

// seed keys nameset's hashes. One random seed per process keeps a caller
// from choosing names that all land in one bucket.
var seed = maphash.MakeSeed()

// linearRows is the window length up to which nameset compares a name
// with every name of the window instead of hashing it. Measured with
// names shaped like an engine's (32-byte block hashes, see BenchmarkCut),
// a hashed lookup costs about as much as eight compares.
const linearRows = 8

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

	// hashes[k] is the hash of names[hashFrom+k] for k < hashLen: rows
	// are hashed hashChunk at a time, ahead of the window, in a loop whose
	// iterations do not wait for one another. A row's hash does not
	// depend on its window, so a new window uses what the last one left.
	hashes   [hashChunk]uint64
	hashFrom int
	hashLen  int
}

// hashChunk is how many rows nameset hashes at once.
const hashChunk = 64

const (
	rowBits = 48
	rowMask = 1<<rowBits - 1
)

// reset makes the set answer for names, in windows of at most longest
// rows, keeping its table when it is large enough.
func (s *nameset) reset(names [][]byte, longest int) {
	s.names, s.longest = names, longest
	s.from, s.end, s.indexed = 0, 0, 0
	s.hashFrom, s.hashLen = 0, 0
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
func (s *nameset) repeats() (int, bool) { return s.grow(s.end + 1) }

// grow grows the window one row at a time up to last (at most
// from+longest, at most len(names)), and stops at the first row that
// repeats a name of the window, returning the first row of the window
// holding that name. The loop is one function, its table and window in
// locals, so a row costs a hash from the chunk and a probe or two.
func (s *nameset) grow(last int) (int, bool) {
	for s.end < last && s.end-s.from < linearRows {
		i := s.end
		name := s.names[i]
		for j := s.from; j < i; j++ {
			if sameName(s.names[j], name) {
				return j, true
			}
		}
		s.end++
	}
	if s.end >= last {
		return -1, false
	}
	if s.slots == nil {
		s.slots = make([]uint64, tableSize(s.longest))
	}
	s.dirty = true
	slots, names, from := s.slots, s.names, s.from
	mask := uint64(len(slots) - 1)
	for ; s.indexed < s.end; s.indexed++ {
		// The window's first rows are distinct: the scan checked them.
		insert(slots, mask, from, s.indexed, s.hash(s.indexed))
	}
	i := s.end
	for i < last {
		k := i - s.hashFrom
		if k >= s.hashLen {
			s.fill(i)
			k = 0
		}
		h := s.hashes[k]
		// The probe, written out here so its locals stay in registers:
		// it stops at the first slot that is empty or left by an earlier
		// window, or at this name.
		tag := h >> rowBits << rowBits
		for p := h & mask; ; p = (p + 1) & mask {
			e := slots[p]
			row := int(e&rowMask) - 1
			if row < from { // empty (row -1) or left by an earlier window
				slots[p] = tag | uint64(i+1)
				break
			}
			if e&^rowMask == tag && sameName(names[row], names[i]) {
				s.end, s.indexed = i, i
				return row, true
			}
		}
		i++
	}
	s.end, s.indexed = i, i
	return -1, false
}

// insert indexes row i, of hash h, known to be new to the window, in
// the first slot from h's on that is empty or left by an earlier window.
func insert(slots []uint64, mask uint64, from, i int, h uint64) {
	for p := h & mask; ; p = (p + 1) & mask {
		if int(slots[p]&rowMask)-1 < from {
			slots[p] = h>>rowBits<<rowBits | uint64(i+1)
			return
		}
	}
}

// sameName reports whether a and b are equal. Names of one group (block
// hashes, or counters behind a common stem) differ mostly near their
// end, so comparing the last byte first skips most full compares.
func sameName(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || a[len(a)-1] == b[len(b)-1]) && bytes.Equal(a, b)
}

// hash returns row i's hash, hashing the chunk from row i on when it is
// not at hand. Rows are asked for in order from reset on (a window
// starts at or past the last one's end), so i is never before hashFrom.
func (s *nameset) hash(i int) uint64 {
	k := i - s.hashFrom
	if k >= s.hashLen {
		s.fill(i)
		k = 0
	}
	return s.hashes[k]
}

// fill hashes the chunk of rows from row i on.
func (s *nameset) fill(i int) {
	n := min(hashChunk, len(s.names)-i)
	for j, name := range s.names[i : i+n] {
		s.hashes[j] = maphash.Bytes(seed, name)
	}
	s.hashFrom, s.hashLen = i, n
}
