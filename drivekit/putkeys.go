package drivekit

import "hash/maphash"

// putKeys is the set of keys this driver is putting: for each key, the
// rows of admitted puts no worker took yet (queued) and whether a worker
// is writing it now. Lookups answer InFlight for every key in it;
// a worker that takes a put row whose key is being written takes it as
// an own write. Guarded by the driver's lock.
//
// It is indexed by a 64-bit hash of the key, computed once a row, and
// stays exact: each entry holds its own copy of the key, compared on
// every find, and entries whose hashes collide are chained. The set
// never holds a string of an operation's key buffer, so that buffer can
// be reused once the operation is done with it (see [Options.ReuseKeys]).
// Entries are reused from a free list: steady puts allocate nothing.
type putKeys struct {
	byHash  map[uint64]*putKey
	free    []*putKey
	writing int // entries being written: [Stats].KeysWriting
	seed    maphash.Seed
	// hash is maphash under seed; tests set it to force collisions.
	hash func(seed maphash.Seed, key string) uint64
}

// putKey is one key of a putKeys: in it while queued > 0 or writing.
type putKey struct {
	key     []byte // the set's own copy
	sum     uint64
	queued  int
	writing bool
	next    *putKey // the next entry of the same hash
}

// maxFreePutKeys bounds the entries kept for reuse.
const maxFreePutKeys = 1 << 14

func newPutKeys() putKeys {
	return putKeys{byHash: make(map[uint64]*putKey), seed: maphash.MakeSeed(), hash: maphash.String}
}

// find returns the entry of key, or nil.
func (s *putKeys) find(key string) *putKey {
	if len(s.byHash) == 0 {
		return nil
	}
	for e := s.byHash[s.hash(s.seed, key)]; e != nil; e = e.next {
		if string(e.key) == key {
			return e
		}
	}
	return nil
}

// has reports whether key is queued or being written.
func (s *putKeys) has(key string) bool { return s.find(key) != nil }

// queue counts one more queued row of key and returns its entry, which
// the row keeps until it leaves the set (see unqueue and written).
func (s *putKeys) queue(key string) *putKey {
	sum := s.hash(s.seed, key)
	head := s.byHash[sum]
	for e := head; e != nil; e = e.next {
		if string(e.key) == key {
			e.queued++
			return e
		}
	}
	var e *putKey
	if n := len(s.free); n > 0 {
		e, s.free = s.free[n-1], s.free[:n-1]
	} else {
		e = new(putKey)
	}
	e.key = append(e.key[:0], key...)
	e.sum, e.queued, e.writing, e.next = sum, 1, false, head
	s.byHash[sum] = e
	return e
}

// unqueue counts one queued row of e out: taken by a worker, or ended
// before one took it.
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

// drop takes e out of the set once no row holds it.
func (s *putKeys) drop(e *putKey) {
	if e.queued > 0 || e.writing {
		return
	}
	if head := s.byHash[e.sum]; head == e {
		if e.next == nil {
			delete(s.byHash, e.sum)
		} else {
			s.byHash[e.sum] = e.next
		}
	} else {
		for p := head; p != nil; p = p.next {
			if p.next == e {
				p.next = e.next
				break
			}
		}
	}
	e.next = nil
	if len(s.free) < maxFreePutKeys {
		s.free = append(s.free, e)
	}
}

// len is the number of keys in the set.
func (s *putKeys) len() int {
	n := 0
	for _, e := range s.byHash {
		for ; e != nil; e = e.next {
			n++
		}
	}
	return n
}
