package rowbatch

import "hash/maphash"

// linearRows is the window length up to which keyset compares a key with
// every key of the window instead of hashing it. Measured with keys shaped
// like the backend's (a stem and 64 hex digits, see BenchmarkCut), a
// hashed lookup costs about as much as eight compares.
const linearRows = 8

// seed keys keyset's hashes. One random seed per process keeps a caller
// from choosing keys that all land in one bucket.
var seed = maphash.MakeSeed()

// keyset answers, for a window of consecutive rows keys[from:end), whether
// the row at end repeats a key of the window. The window grows one row at
// a time at its end and restarts further on; it never moves back.
//
// Short windows are scanned. Once a window reaches linearRows rows its
// rows go into an open-addressing table (linear probing, load at most one
// half) that is allocated once, sized for the longest window, and reused
// by every later window without clearing: an entry for a row before the
// window's start counts as empty. That is sound because an entry never
// turns stale while its window lives, so a probe that stops at the first
// empty or stale slot has passed every slot a live key could occupy.
type keyset struct {
	keys    []string
	longest int // the most rows a window can hold; sizes the table

	from, end int // the window: keys[from:end)
	indexed   int // rows [from, indexed) are in slots; from when none are

	// slots holds 0 for empty, else tag<<rowBits | (row+1), tag being the
	// hash's top bits. row+1 < 1<<rowBits always holds: a []string that
	// long would not fit in a Go heap (at most 1<<48 bytes).
	slots []uint64
}

const (
	rowBits = 48
	rowMask = 1<<rowBits - 1
)

// restart begins a new window holding only row from. from must be at or
// past the end of the previous window.
func (s *keyset) restart(from int) {
	s.from, s.end, s.indexed = from, from+1, from
}

// repeats reports whether keys[s.end] repeats a key of the window, and if
// so the first row of the window holding it. Otherwise it grows the window
// by that row. s.end must be a row of keys, and the window must hold fewer
// than longest rows.
func (s *keyset) repeats() (int, bool) {
	i := s.end
	key := s.keys[i]
	if i-s.from < linearRows {
		for j := s.from; j < i; j++ {
			if sameKey(s.keys[j], key) {
				return j, true
			}
		}
		s.end++
		return -1, false
	}
	if s.slots == nil {
		size := 4
		for size < 2*s.longest {
			size <<= 1
		}
		s.slots = make([]uint64, size)
	}
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

// place looks row i's key up among the window's indexed rows and returns
// the row holding it; if none does, it indexes row i.
func (s *keyset) place(i int) (int, bool) {
	key := s.keys[i]
	h := maphash.String(seed, key)
	tag := h >> rowBits << rowBits
	mask := uint64(len(s.slots) - 1)
	for p := h & mask; ; p = (p + 1) & mask {
		e := s.slots[p]
		row := int(e&rowMask) - 1
		if row < s.from { // empty (row -1) or left by an earlier window
			s.slots[p] = tag | uint64(i+1)
			return -1, false
		}
		if e&^rowMask == tag && sameKey(s.keys[row], key) {
			return row, true
		}
	}
}

// sameKey reports whether a and b are equal. Keys of one group share a
// long stem and differ mostly near their end, so comparing the last byte
// first skips most full compares.
func sameKey(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || a[len(a)-1] == b[len(b)-1]) && a == b
}
