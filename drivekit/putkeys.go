package drivekit

import "hash/maphash"

// putKeys is the set of keys this driver is putting: for each key, the
// rows of admitted puts no worker took yet (queued) and whether a worker
// is writing it now. Lookups answer InFlight for every key in it; a
// worker that takes a put row whose key is being written takes it as an
// own write. Guarded by the driver's lock.
//
// It is an open-addressing table indexed by a 64-bit hash of the key,
// computed once a row at admission: the row keeps its entry, so taking
// and ending it cost no lookup. It stays exact: each entry holds its own
// copy of the key, compared on every find, and entries whose hashes
// collide sit in the following slots. The set never holds a string of
// an operation's key buffer, so that buffer can be reused once the
// operation is done with it (see [Options.ReuseKeys]). Entries are
// reused from a free list: steady puts allocate nothing.
type putKeys struct {
	slots   []putSlot // a power of two long, at most half full
	n       int       // entries in slots
	free    []*putKey
	writing int // entries being written: [Stats].KeysWriting
	seed    maphash.Seed
	// hash is maphash under seed; tests set it to force collisions.
	hash func(seed maphash.Seed, key string) uint64
}

// putSlot is a slot of a putKeys: its entry (nil: empty) and the
// entry's hash, compared without reading the entry.
type putSlot struct {
	sum uint64
	e   *putKey
}

// putKey is one key of a putKeys: in it while queued > 0 or writing.
type putKey struct {
	key     []byte // the set's own copy
	sum     uint64
	queued  int
	writing bool
}

// maxFreePutKeys bounds the entries kept for reuse.
const maxFreePutKeys = 1 << 14

func newPutKeys() putKeys {
	return putKeys{seed: maphash.MakeSeed(), hash: maphash.String}
}

// empty reports whether no key is in the set.
func (s *putKeys) empty() bool { return s.n == 0 }

// slot returns the slot of key, whose hash is sum: its entry's, or the
// empty slot where it would go.
func (s *putKeys) slot(key string, sum uint64) int {
	mask := uint64(len(s.slots) - 1)
	for i := sum & mask; ; i = (i + 1) & mask {
		sl := &s.slots[i]
		if sl.e == nil || (sl.sum == sum && string(sl.e.key) == key) {
			return int(i)
		}
	}
}

// find returns the entry of key, or nil.
func (s *putKeys) find(key string) *putKey {
	if s.n == 0 {
		return nil
	}
	return s.slots[s.slot(key, s.hash(s.seed, key))].e
}

// has reports whether key is queued or being written.
func (s *putKeys) has(key string) bool { return s.find(key) != nil }

// queue counts one more queued row of key and returns its entry, which
// the row keeps until it leaves the set (see unqueue, take and written).
func (s *putKeys) queue(key string) *putKey {
	if 2*(s.n+1) > len(s.slots) {
		s.resize(max(16, 2*len(s.slots)))
	}
	sum := s.hash(s.seed, key)
	i := s.slot(key, sum)
	if e := s.slots[i].e; e != nil {
		e.queued++
		return e
	}
	var e *putKey
	if n := len(s.free); n > 0 {
		e, s.free[n-1], s.free = s.free[n-1], nil, s.free[:n-1]
	} else {
		e = new(putKey)
	}
	e.key = append(e.key[:0], key...)
	e.sum, e.queued, e.writing = sum, 1, false
	s.slots[i] = putSlot{sum: sum, e: e}
	s.n++
	return e
}

// resize moves every entry into a table of n slots.
func (s *putKeys) resize(n int) {
	old := s.slots
	s.slots = make([]putSlot, n)
	mask := uint64(n - 1)
	for _, sl := range old {
		if sl.e == nil {
			continue
		}
		i := sl.sum & mask
		for s.slots[i].e != nil {
			i = (i + 1) & mask
		}
		s.slots[i] = sl
	}
}

// unqueue counts one queued row of e out: ended before a worker took it.
func (s *putKeys) unqueue(e *putKey) {
	e.queued--
	s.drop(e)
}

// take counts a queued row of e out as a worker takes it, and reports
// whether the worker writes the key (false: another put writes it now,
// the row is an own write).
func (s *putKeys) take(e *putKey) (writes bool) {
	e.queued--
	if e.writing {
		return false
	}
	e.writing = true
	s.writing++
	return true
}

// written ends the writing of e by the row that took it as a writer.
func (s *putKeys) written(e *putKey) {
	e.writing = false
	s.writing--
	s.drop(e)
}

// drop takes e out of the set once no row holds it, moving back the
// entries after it that its slot had pushed on, so that every entry
// stays reachable from its hash's slot.
func (s *putKeys) drop(e *putKey) {
	if e.queued > 0 || e.writing {
		return
	}
	mask := uint64(len(s.slots) - 1)
	i := e.sum & mask
	for s.slots[i].e != e {
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; s.slots[j].e != nil; j = (j + 1) & mask {
		// The entry at j may move to i unless its own slot lies in
		// (i, j], cyclically: it would then be found before i.
		home := s.slots[j].sum & mask
		if (j-home)&mask < (j-i)&mask {
			continue
		}
		s.slots[i] = s.slots[j]
		i = j
	}
	s.slots[i] = putSlot{}
	s.n--
	if len(s.free) < maxFreePutKeys {
		s.free = append(s.free, e)
	}
}
