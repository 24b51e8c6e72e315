package events

import "hash/maphash"

// announced is the set of blocks the node announced stored and not yet
// removed, bounded: past its bound the oldest announcement is forgotten
// (counted), and a later absence of that block is not announced as a
// removal. A block is kept as a 64-bit hash of its topic and name (no
// pointer for the collector to follow, 16 bytes and the map's own a
// block): two blocks that share a hash, one in 2⁶⁴ a pair, make a
// removal of one announce the other removed too, which a router takes
// as a block it no longer finds. Used by the publisher's goroutine
// alone.
type announced struct {
	seed  maphash.Seed
	set   map[uint64]uint64 // id → the stamp of its place in order
	order []placed          // ring, oldest at head
	head  int
	n     int
	stamp uint64
}

// placed is one place of the ring: a block and the stamp it was
// announced with (a place whose stamp is no longer its block's is stale:
// the block was removed, and perhaps announced again since).
type placed struct {
	id    uint64
	stamp uint64
}

func newAnnounced(bound int) *announced {
	return &announced{seed: maphash.MakeSeed(), set: make(map[uint64]uint64, min(bound, 1<<16)), order: make([]placed, bound)}
}

// id is a block's identity across scopes: the hash of its topic, then
// its name.
func (a *announced) id(topic string, name []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(a.seed)
	_, _ = h.WriteString(topic)
	_ = h.WriteByte(0)
	_, _ = h.Write(name)
	return h.Sum64()
}

// add remembers a block; it returns whether an announced one was
// forgotten to make room.
func (a *announced) add(id uint64) (forgot bool) {
	if _, ok := a.set[id]; ok {
		return false
	}
	if a.n == len(a.order) {
		old := a.order[a.head]
		a.order[a.head] = placed{}
		a.head = (a.head + 1) % len(a.order)
		a.n--
		if s, ok := a.set[old.id]; ok && s == old.stamp {
			delete(a.set, old.id)
			forgot = true
		}
	}
	a.stamp++
	a.set[id] = a.stamp
	a.order[(a.head+a.n)%len(a.order)] = placed{id: id, stamp: a.stamp}
	a.n++
	return forgot
}

// remove forgets a block; it returns whether it was announced. Its place
// in the ring turns stale and is reused when the ring comes round to it.
func (a *announced) remove(id uint64) bool {
	if _, ok := a.set[id]; !ok {
		return false
	}
	delete(a.set, id)
	return true
}

// len is how many blocks are announced and not removed.
func (a *announced) len() int { return len(a.set) }
