package fakesdk

import (
	"time"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// The life of a put in flight: claimed when the put arrives, settled
// when it ends, discarded when a later put finds it stale. settle takes
// s.mu; the others run with it held.

// inFlight reports whether a put of key is in flight and younger than
// the discard timeout: a new put of the key answers 0 and stores
// nothing.
func (s *Store) inFlight(key string) bool {
	cl := s.writing[key]
	return cl != nil && time.Since(cl.since) < s.opts.discardTimeout()
}

// discardStale discards the claim on key, if any, as the master does
// for a new put once the claim is older than the discard timeout: the
// key is free, and the overtaken put, when it ends, stores nothing.
func (s *Store) discardStale(key string) {
	if cl := s.writing[key]; cl != nil {
		cl.discarded = true
		delete(s.writing, key)
	}
}

// claimKey reserves key for a put of size bytes by owner.
func (s *Store) claimKey(key string, owner *Client, size uint64) *claim {
	cl := &claim{key: key, owner: owner, size: size, since: time.Now()}
	s.writing[key] = cl
	s.used += int64(size)
	return cl
}

// settle ends a claimed put: its object obj is stored, or (obj nil, the
// put failed) its claim and bytes are given back. A claim that a later
// put discarded stores nothing and gives its bytes back; overtaken is
// then true and answer is what the master's put-end answers for it: it
// matches the key's holder by client, so 0 when the holder is the same
// client, ILLEGAL_CLIENT when another (a seeded object's holder is
// another), OBJECT_NOT_FOUND when nothing holds the key any more.
func (s *Store) settle(cl *claim, obj []byte) (answer mooncakesdk.Code, overtaken bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cl.discarded {
		s.used -= int64(cl.size)
		var holder *Client
		switch w, o := s.writing[cl.key], s.objects[cl.key]; {
		case w != nil:
			holder = w.owner
		case o != nil:
			holder = o.owner
		default:
			return mooncakesdk.ObjectNotFound, true
		}
		if holder == cl.owner {
			return mooncakesdk.OK, true
		}
		return mooncakesdk.IllegalClient, true
	}
	delete(s.writing, cl.key)
	if obj == nil {
		s.used -= int64(cl.size)
		return mooncakesdk.OK, false
	}
	s.objects[cl.key] = &object{data: obj, owner: cl.owner}
	return mooncakesdk.OK, false
}
