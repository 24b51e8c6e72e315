package memdrv

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kvshare/kvshare/contract"
)

// Store is an in-process byte store: complete objects by key. Any number
// of drivers may share one store, so two endpoints in one process see the
// same objects. It is safe for concurrent use.
//
// An object is written whole or not at all: while a write is under way
// the key exists but is not ready (gets and puts of it end NotReady), and
// readers never see part of an object. A put never overwrites: the first
// complete object under a key stays until [Store.Delete] or [Store.Set]
// replaces it.
type Store struct {
	mu       sync.Mutex
	entries  map[string]*entry
	arena    *arena // nil: objects on the Go heap
	capacity int64  // 0: unlimited
	full     bool   // every driver put is Declined
	used     int64  // bytes of complete objects
	reserved int64  // bytes of driver puts under way
}

// entry is one key: a complete object when w is nil, a write under way
// otherwise.
type entry struct {
	data []byte // immutable once complete
	w    *write
	// block: data is a block of the arena, given back once the entry is
	// dropped and no get reads it (readers counts those that do).
	block   bool
	readers int
	dropped bool
}

// write is one write under way. The entry carries the write that owns it;
// a write that lost its entry (Delete, Set, a later BeginWrite) finds out
// when it tries to finish.
type write struct {
	key  string
	size int64  // bytes reserved against capacity; 0 for BeginWrite
	buf  []byte // the arena block the put copies into; nil: a heap object
	done bool
}

// NewStore returns an empty store without a capacity limit, its objects
// on the Go heap.
func NewStore() *Store {
	return &Store{entries: make(map[string]*entry)}
}

// NewSizedStore returns an empty store that takes capacity bytes up
// front, outside the Go heap, every page faulted in before it returns
// (see [Store.Prefault]): a driver's put copies into memory already
// mapped, as into a mounted Mooncake segment, and a put beyond the
// capacity ends Declined. The memory of a dropped object is reused by
// a later object of the same size once no get reads it; it is never
// given back to the system (the store lives as long as the process).
// [Store.Set] and [Store.BeginWrite] fall back to the heap when the
// capacity is taken.
func NewSizedStore(capacity int64) (*Store, error) {
	if capacity <= 0 {
		return nil, fmt.Errorf("memdrv: a sized store of %d bytes: want > 0", capacity)
	}
	a, err := newArena(capacity)
	if err != nil {
		return nil, err
	}
	return &Store{entries: make(map[string]*entry), arena: a, capacity: capacity}, nil
}

// Prefault is how long a sized store took to map and fault in its
// memory; 0 for a store on the heap.
func (s *Store) Prefault() time.Duration {
	if s.arena == nil {
		return 0
	}
	return s.arena.prefault
}

// SetCapacity caps the bytes of the store's objects: a driver's put that
// would take the store beyond bytes (counting complete objects and puts
// under way) ends Declined. 0 (or less) means unlimited. Objects already
// stored stay; [Store.Set] and [Store.BeginWrite] are never refused.
func (s *Store) SetCapacity(bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.capacity = max(bytes, 0)
	s.full = false
}

// SetFull makes the store full: every later driver put of a key without
// a complete object ends Declined, whatever its size, until SetCapacity
// is called. (SetCapacity(0) means unlimited, so it cannot say "full" of
// an empty store.)
func (s *Store) SetFull() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.full = true
}

// Set stores a complete object under key, a copy of data, replacing
// whatever the key held (including a write under way, which then fails
// to finish). It stages objects for tests, as another writer would.
func (s *Store) Set(key string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(key)
	s.entries[strings.Clone(key)] = s.keepLocked(data)
	s.used += int64(len(data))
}

// keepLocked is a complete entry holding a copy of data: in the arena
// when it has room, else on the heap.
func (s *Store) keepLocked(data []byte) *entry {
	if s.arena != nil && len(data) > 0 {
		if b, ok := s.arena.alloc(int64(len(data))); ok {
			copy(b, data)
			return &entry{data: b, block: true}
		}
	}
	return &entry{data: clone(data)}
}

// Object returns a copy of the complete object under key and true, or
// nil and false when the key is absent or still being written.
func (s *Store) Object(key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[key]
	if !ok || e.w != nil {
		return nil, false
	}
	return clone(e.data), true
}

// Delete removes the key, whatever it holds. A write under way then fails
// to finish.
func (s *Store) Delete(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(key)
}

// Clear removes every key, as Delete of each would: writes under way
// then fail to finish, and a sized store's memory is reused by later
// objects once no get reads it.
func (s *Store) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key := range s.entries {
		s.dropLocked(key)
	}
}

// Len returns the number of complete objects.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.entries {
		if e.w == nil {
			n++
		}
	}
	return n
}

// Bytes returns the total size of the complete objects.
func (s *Store) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// BeginWrite stages another writer that starts writing key: until finish
// is called, the key exists but is not ready, so every driver's get and
// put of it end NotReady. A complete object the key held is dropped.
// finish(data) completes the object with a copy of data; finish(nil)
// abandons the write, leaving the key absent. finish is idempotent, and
// does nothing once the key was deleted, set or begun again.
func (s *Store) BeginWrite(key string) (finish func(data []byte)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(key)
	w := &write{key: strings.Clone(key)}
	s.entries[w.key] = &entry{w: w}
	return func(data []byte) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if w.done {
			return
		}
		w.done = true
		e, ok := s.entries[w.key]
		if !ok || e.w != w {
			return
		}
		if data == nil {
			delete(s.entries, w.key)
			return
		}
		s.entries[w.key] = s.keepLocked(data)
		s.used += int64(len(data))
	}
}

// dropLocked removes key, releasing the bytes of a complete object: an
// arena block goes back now, or when the last get reading it is done.
func (s *Store) dropLocked(key string) {
	if e, ok := s.entries[key]; ok {
		if e.w == nil {
			s.used -= int64(len(e.data))
			e.dropped = true
			s.giveBackLocked(e)
		}
		delete(s.entries, key)
	}
}

// giveBackLocked returns a dropped entry's block to the arena once no
// get reads it.
func (s *Store) giveBackLocked(e *entry) {
	if e.block && e.dropped && e.readers == 0 {
		s.arena.release(e.data)
		e.data, e.block = nil, false
	}
}

// reserve starts a driver's put of size bytes under key. The new entry
// keeps a copy of key (a driver's keys are strings over one buffer per
// operation, which a stored object must not pin). It returns the
// write to finish, or nil and the row's verdict when the put ends here:
// Ready when a complete object stands behind the key already (the first
// one stays), NotReady when another write of it is under way, Declined
// when the object would exceed the capacity.
func (s *Store) reserve(key string, size int64) (*write, contract.RowStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[key]; ok {
		if e.w == nil {
			return nil, contract.Ready
		}
		return nil, contract.NotReady
	}
	if s.full || s.capacity > 0 && s.used+s.reserved+size > s.capacity {
		return nil, contract.Declined
	}
	var buf []byte
	if s.arena != nil && size > 0 {
		b, ok := s.arena.alloc(size)
		if !ok {
			return nil, contract.Declined // no block of that size left
		}
		buf = b
	}
	w := &write{key: strings.Clone(key), size: size, buf: buf}
	s.entries[w.key] = &entry{w: w}
	s.reserved += size
	return w, contract.Pending
}

// commit completes w with data (which the store keeps). It reports false
// when the write lost its key meanwhile; the data is then dropped.
func (s *Store) commit(w *write, data []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.done {
		return false
	}
	w.done = true
	s.reserved -= w.size
	e, ok := s.entries[w.key]
	if !ok || e.w != w {
		s.releaseBufLocked(w)
		return false
	}
	e.data, e.w, e.block = data, nil, w.buf != nil
	s.used += int64(len(data))
	return true
}

// releaseBufLocked gives back the arena block of a write that ended
// without an object.
func (s *Store) releaseBufLocked(w *write) {
	if w.buf != nil {
		s.arena.release(w.buf)
		w.buf = nil
	}
}

// abandon gives up w, leaving its key absent if w still owns it.
func (s *Store) abandon(w *write) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.done {
		return
	}
	w.done = true
	s.reserved -= w.size
	s.releaseBufLocked(w)
	if e, ok := s.entries[w.key]; ok && e.w == w {
		delete(s.entries, w.key)
	}
}

// lookup returns the complete object under key (which no one may
// modify) and Ready, or nil and Miss (absent) or NotReady (being
// written). A Ready object is read until done(e) is called: its memory
// is not reused before.
func (s *Store) lookup(key string) (*entry, []byte, contract.RowStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[key]
	switch {
	case !ok:
		return nil, nil, contract.Miss
	case e.w != nil:
		return nil, nil, contract.NotReady
	}
	e.readers++
	return e, e.data, contract.Ready
}

// done ends a read of e that lookup began.
func (s *Store) done(e *entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.readers--
	s.giveBackLocked(e)
}

// presenceLocked says whether key holds a complete object (Ready), is
// being written (NotReady) or is absent (Miss), without copying the key.
func (s *Store) presenceLocked(key []byte) contract.RowStatus {
	e, ok := s.entries[string(key)]
	switch {
	case !ok:
		return contract.Miss
	case e.w != nil:
		return contract.NotReady
	}
	return contract.Ready
}

func clone(b []byte) []byte {
	out := make([]byte, len(b))
	copy(out, b)
	return out
}
