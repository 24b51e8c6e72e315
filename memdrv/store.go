package memdrv

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
)

// ErrStoreBusy is wrapped by a [Store.Close] refused because a driver's
// put is writing an object or a get reading one: its memory stays.
var ErrStoreBusy = errors.New("memdrv: store busy")

// Store is an in-process byte store: complete objects by key. Any number
// of drivers may share one store, so two endpoints in one process see the
// same objects. It is safe for concurrent use.
//
// An object is written whole or not at all: while a write is under way
// the key exists but is not ready (gets and puts of it end NotReady), and
// readers never see part of an object. A put never overwrites: the first
// complete object under a key stays until [Store.Delete] or [Store.Set]
// replaces it, or (in a bounded store) eviction drops it.
//
// A store made by [NewStore] keeps its objects on the Go heap, without
// bound unless [Store.SetCapacity] sets one (a put beyond it is
// Declined). A store made by [NewBoundedStore] is a cache: its capacity
// is taken up front outside the Go heap, and a put that needs room
// evicts the least recently used objects.
type Store struct {
	mu      sync.Mutex
	entries map[string]*entry

	// A bounded store: its chunks (nil for a store on the heap), the
	// most chunks its objects and puts may hold (SetCapacity lowers it),
	// and its evictable objects by last use.
	chunks *chunkPool
	limit  int64
	recent recency

	capacity int64 // a heap store: 0 unlimited
	full     bool  // every driver put is Declined
	closed   bool  // Close ran: every driver put is Declined
	used     int64 // bytes of complete objects
	reserved int64 // a heap store: bytes of driver puts under way
	objects  int64 // complete objects
	writing  int64 // driver puts holding their entry (reserve to commit or abandon)
	reading  int64 // gets holding an object (lookup to done)

	evictions, evictedBytes, declines int64

	// The transfer gates of HoldTransfers; gated counts them, so that a
	// row of a store without gates does not take the lock to look.
	gates []*TransferGate
	gated atomic.Int32
}

// entry is one key: a complete object when w is nil, a write under way
// otherwise.
type entry struct {
	key string
	obj object // immutable once complete
	w   *write
	// readers counts the gets reading obj: its memory is not reused, nor
	// the object evicted, before they are done. dropped: the key lost
	// the object (Delete, Set, Clear) while they read; its chunks go back
	// once they are done.
	readers int
	dropped bool
	// The links of the store's recency list, while listed.
	older, newer *entry
	listed       bool
}

// write is one write under way. The entry carries the write that owns it;
// a write that lost its entry (Delete, Set, a later BeginWrite) finds out
// when it tries to finish.
type write struct {
	key string
	// obj is the memory the put copies into: chunks of a bounded store,
	// taken by reserve, or a heap slice the put makes (nil for
	// BeginWrite). obj.size counts against a heap store's capacity.
	obj  object
	done bool
}

// NewStore returns an empty store without a capacity limit, its objects
// on the Go heap.
func NewStore() *Store {
	return &Store{entries: make(map[string]*entry)}
}

// NewBoundedStore returns an empty bounded store: a cache of o.Capacity
// bytes taken up front, outside the Go heap (package hostmem, huge pages
// when asked), every page faulted in before it returns (see
// [Store.Prefault]), cut into chunks of o.ChunkBytes. A driver's put
// copies into memory already mapped; an object takes its size rounded
// up to whole chunks, adjacent or not, so the chunks of any object
// dropped serve an object of any size.
//
// A put that needs room evicts the least recently used objects until it
// fits (a get or a lookup that finds an object counts as a use). It
// never evicts an object a get is reading or a put is writing: a put
// that would fit only by evicting one, or that is larger than the
// capacity, is Declined and evicts nothing. [Store.Set] and
// [Store.BeginWrite] evict alike, and keep an object that cannot fit on
// the heap, never evicted. [Store.Stats] counts the objects, their
// bytes, the evictions and the declines. The memory stays mapped until
// [Store.Close].
//
// Options out of range are an error wrapping [ErrStoreOptions] naming
// the field; a mapping the kernel refuses, an error naming the size.
func NewBoundedStore(o StoreOptions) (*Store, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	p, err := newChunkPool(o)
	if err != nil {
		return nil, err
	}
	return &Store{entries: make(map[string]*entry), chunks: p, limit: p.count}, nil
}

// Prefault is how long a bounded store took to fault its memory in; 0
// for a store on the heap.
func (s *Store) Prefault() time.Duration { return s.Memory().Prefault }

// Memory says what a bounded store's mapping asked for and got (page
// size, locking, the time faulting it in took); the zero Report for a
// store on the heap, of no chunks, or closed.
func (s *Store) Memory() hostmem.Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.chunks == nil || s.chunks.mem == nil {
		return hostmem.Report{}
	}
	return s.chunks.mem.Report()
}

// SetCapacity caps the bytes of the store's objects (counting puts
// under way). In a store on the heap a driver's put beyond the cap ends
// Declined, 0 (or less) meaning unlimited. In a bounded store the cap,
// rounded down to whole chunks, is the memory its objects may hold: a
// put beyond it evicts as a put beyond the capacity does, 0 (or less, or
// more than the capacity) meaning the whole capacity. Objects already
// stored stay until a put needs their room; [Store.Set] and
// [Store.BeginWrite] are never refused. It ends SetFull.
func (s *Store) SetCapacity(bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.full = false
	if s.chunks == nil {
		s.capacity = max(bytes, 0)
		return
	}
	s.limit = s.chunks.count
	if bytes > 0 && bytes/s.chunks.size < s.limit {
		s.limit = bytes / s.chunks.size
	}
}

// SetFull makes the store full: every later driver put of a key without
// a complete object ends Declined, whatever its size, evicting nothing,
// until SetCapacity is called. (SetCapacity(0) means unlimited, so it
// cannot say "full" of an empty store.)
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
	s.keepLocked(strings.Clone(key), data)
}

// keepLocked stores a complete object under key, a copy of data: in a
// bounded store's chunks, evicting what it must, else (a heap store, or
// no room to be made) on the heap.
func (s *Store) keepLocked(key string, data []byte) {
	e := &entry{key: key}
	size := int64(len(data))
	if p := s.chunks; p != nil && s.roomLocked(p.chunksFor(size)) {
		e.obj = object{size: size, chunks: p.take(p.chunksFor(size)), pool: p}
		e.obj.fillFrom(data)
		s.recent.add(e)
	} else {
		e.obj = object{size: size, heap: clone(data)}
	}
	s.entries[key] = e
	s.used += size
	s.objects++
}

// Object returns a copy of the complete object under key and true, or
// nil and false when the key is absent or still being written. It is no
// use of the object: it changes no eviction order.
func (s *Store) Object(key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[key]
	if !ok || e.w != nil {
		return nil, false
	}
	return e.obj.prefix(e.obj.size), true
}

// Delete removes the key, whatever it holds. A write under way then fails
// to finish.
func (s *Store) Delete(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(key)
}

// Clear removes every key, as Delete of each would: writes under way
// then fail to finish, and a bounded store's memory is reused by later
// objects once no get reads it.
func (s *Store) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clearLocked()
}

// clearLocked drops every key.
func (s *Store) clearLocked() {
	for key := range s.entries {
		s.dropLocked(key)
	}
}

// Close ends the store once nothing reads or writes its memory: it
// drops every object (writes staged with BeginWrite then fail to
// finish) and unmaps a bounded store's memory. Later driver puts end
// Declined and gets Miss; Set keeps objects on the heap. While a
// driver's put writes an object or a get reads one it is refused with
// an error wrapping [ErrStoreBusy], and nothing changes. Close is
// idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if s.writing > 0 || s.reading > 0 {
		return fmt.Errorf("%w: %d puts writing, %d gets reading its memory", ErrStoreBusy, s.writing, s.reading)
	}
	s.clearLocked()
	s.closed = true
	if s.chunks != nil {
		s.limit = 0
		return s.chunks.close()
	}
	return nil
}

// Len returns the number of complete objects.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int(s.objects)
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
// finish(data) completes the object with a copy of data (see
// [Store.Set]); finish(nil) abandons the write, leaving the key absent.
// finish is idempotent, and does nothing once the key was deleted, set
// or begun again.
func (s *Store) BeginWrite(key string) (finish func(data []byte)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(key)
	w := &write{key: strings.Clone(key)}
	s.entries[w.key] = &entry{key: w.key, w: w}
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
		delete(s.entries, w.key)
		if data != nil {
			s.keepLocked(w.key, data)
		}
	}
}

// dropLocked removes key, releasing the bytes of a complete object: a
// bounded store's chunks go back now, or when the last get reading them
// is done.
func (s *Store) dropLocked(key string) {
	e, ok := s.entries[key]
	if !ok {
		return
	}
	delete(s.entries, key)
	if e.w != nil {
		return
	}
	s.used -= e.obj.size
	s.objects--
	s.recent.remove(e)
	e.dropped = true
	s.giveBackLocked(e)
}

// giveBackLocked returns a dropped entry's chunks once no get reads
// them.
func (s *Store) giveBackLocked(e *entry) {
	if e.dropped && e.readers == 0 && e.obj.chunks != nil {
		s.chunks.give(e.obj.chunks)
		e.obj.chunks = nil
	}
}

// roomLocked makes room for an object of need chunks in a bounded
// store, evicting the least recently used objects until it fits, and
// reports whether it does. When evicting every object that may be
// evicted would not make room, it evicts nothing and reports false.
func (s *Store) roomLocked(need int64) bool {
	p := s.chunks
	if need > s.limit-(p.inUse()-s.recent.chunks) {
		return false
	}
	for p.inUse()+need > s.limit {
		s.evictLocked(s.recent.last)
	}
	return true
}

// evictLocked drops e, the least recently used object, to make room.
func (s *Store) evictLocked(e *entry) {
	s.evictions++
	s.evictedBytes += e.obj.size
	s.dropLocked(e.key)
}

// reserve starts a driver's put of size bytes under key. The new entry
// keeps a copy of key (a driver's keys are strings over one buffer per
// operation, which a stored object must not pin). It returns the
// write to finish, or nil and the row's verdict when the put ends here:
// Ready when a complete object stands behind the key already (the first
// one stays), NotReady when another write of it is under way, Declined
// when the store is full or closed, when the object would exceed a heap
// store's capacity, or when a bounded store cannot make room for it.
// A write on a bounded store holds its chunks; a put on the heap makes
// its own slice (w.obj.heap) before commit.
func (s *Store) reserve(key string, size int64) (*write, contract.RowStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[key]; ok {
		if e.w == nil {
			return nil, contract.Ready
		}
		return nil, contract.NotReady
	}
	w := &write{key: strings.Clone(key), obj: object{size: size}}
	switch p := s.chunks; {
	case s.full || s.closed:
		s.declines++
		return nil, contract.Declined
	case p != nil:
		if !s.roomLocked(p.chunksFor(size)) {
			s.declines++
			return nil, contract.Declined
		}
		w.obj.chunks, w.obj.pool = p.take(p.chunksFor(size)), p
	case s.capacity > 0 && s.used+s.reserved+size > s.capacity:
		s.declines++
		return nil, contract.Declined
	default:
		s.reserved += size
	}
	s.entries[w.key] = &entry{key: w.key, w: w}
	s.writing++
	return w, contract.Pending
}

// commit completes w with the bytes copied into w.obj. It reports false
// when the write lost its key meanwhile; the bytes are then dropped.
func (s *Store) commit(w *write) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.endWriteLocked(w) {
		return false
	}
	e, ok := s.entries[w.key]
	if !ok || e.w != w {
		s.releaseLocked(w)
		return false
	}
	e.obj, e.w = w.obj, nil
	s.used += w.obj.size
	s.objects++
	if w.obj.inChunks() {
		s.recent.add(e)
	}
	return true
}

// endWriteLocked marks a driver's write done, once: false if it was.
func (s *Store) endWriteLocked(w *write) bool {
	if w.done {
		return false
	}
	w.done = true
	s.writing--
	if !w.obj.inChunks() {
		s.reserved -= w.obj.size
	}
	return true
}

// releaseLocked gives back the chunks of a write that ended without an
// object.
func (s *Store) releaseLocked(w *write) {
	if w.obj.chunks != nil {
		s.chunks.give(w.obj.chunks)
		w.obj.chunks = nil
	}
}

// abandon gives up w, leaving its key absent if w still owns it.
func (s *Store) abandon(w *write) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.endWriteLocked(w) {
		return
	}
	s.releaseLocked(w)
	if e, ok := s.entries[w.key]; ok && e.w == w {
		delete(s.entries, w.key)
	}
}

// lookup returns the complete object under key (which no one may
// modify) and Ready, or Miss (absent) or NotReady (being written). A
// Ready object is read until done(e) is called: it is not evicted and
// its memory not reused before, and done counts the get as its latest
// use.
func (s *Store) lookup(key string) (*entry, object, contract.RowStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[key]
	switch {
	case !ok:
		return nil, object{}, contract.Miss
	case e.w != nil:
		return nil, object{}, contract.NotReady
	}
	e.readers++
	s.reading++
	s.recent.remove(e)
	return e, e.obj, contract.Ready
}

// done ends a read of e that lookup began.
func (s *Store) done(e *entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.readers--
	s.reading--
	switch {
	case e.readers > 0:
	case e.dropped:
		s.giveBackLocked(e)
	case e.obj.inChunks():
		s.recent.add(e)
	}
}

// presenceLocked says whether key holds a complete object (Ready), is
// being written (NotReady) or is absent (Miss), without copying the key.
// Finding an object is a use of it.
func (s *Store) presenceLocked(key []byte) contract.RowStatus {
	e, ok := s.entries[string(key)]
	switch {
	case !ok:
		return contract.Miss
	case e.w != nil:
		return contract.NotReady
	}
	s.recent.use(e)
	return contract.Ready
}

func clone(b []byte) []byte {
	out := make([]byte, len(b))
	copy(out, b)
	return out
}
