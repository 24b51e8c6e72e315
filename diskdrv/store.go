package diskdrv

import (
	"container/list"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/contract"
)

// ErrLocked is wrapped by an Open of a directory another store holds.
var ErrLocked = errors.New("diskdrv: the directory is held by another store (its LOCK file is locked)")

// ErrClosed is wrapped by a call on a closed store.
var ErrClosed = errors.New("diskdrv: the store is closed")

// Store is a directory of objects, one file each, and the index of them
// kept in memory: which keys it holds, their sizes, their order of use,
// and the keys being written now. One process holds a directory at a
// time (its LOCK file); drivers made with [New] share the store. Every
// method is safe for concurrent use.
type Store struct {
	dir    string
	o      Options
	direct bool // the directory's file system takes O_DIRECT
	lock   *os.File
	log    *slog.Logger

	mu      sync.Mutex
	closed  bool
	index   map[string]*list.Element // key → its *entry in lru
	lru     *list.List               // front: most recently used
	writing map[string]struct{}      // keys a put writes now
	used    int64                    // bytes of the objects and of the puts under way
	dropped int                      // files the open removed: torn, foreign or left over

	directRows, cachedRows atomic.Int64 // rows moved with O_DIRECT, through the page cache
}

// entry is one complete object.
type entry struct {
	key  string
	name string // the key's digest: its file's name
	size int64  // payload bytes
}

// Open opens (creating it when missing) the store in dir: it takes the
// directory's lock, removes every temporary file a killed put left, and
// rebuilds the index from the object files, checking each header (its
// key's digest is the file's name, its length the file's). A file that
// fails a check is removed and counted (see [Store.Dropped]).
func Open(dir string, o Options) (*Store, error) {
	if o.Capacity < 0 {
		return nil, fmt.Errorf("diskdrv: capacity must be >= 0, got %d", o.Capacity)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if err := os.MkdirAll(filepath.Join(dir, objectsDir), 0o755); err != nil {
		return nil, fmt.Errorf("diskdrv: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("diskdrv: %w", err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("%w: %s: %w", ErrLocked, dir, err)
	}
	s := &Store{dir: dir, o: o, lock: lock, log: o.Logger, index: map[string]*list.Element{},
		lru: list.New(), writing: map[string]struct{}{}}
	if err := s.rebuild(); err != nil {
		_ = lock.Close()
		return nil, err
	}
	s.direct = !o.NoDirectIO && DirectIOWorks(dir) == nil
	return s, nil
}

// rebuild fills the index from the object files. Files are taken in
// the order the directory lists them: the order of use starts unknown.
func (s *Store) rebuild() error {
	top := filepath.Join(s.dir, objectsDir)
	for b := range 256 {
		sub := filepath.Join(top, fmt.Sprintf("%02x", b))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return fmt.Errorf("diskdrv: %w", err)
		}
		names, err := os.ReadDir(sub)
		if err != nil {
			return fmt.Errorf("diskdrv: %w", err)
		}
		for _, de := range names {
			path := filepath.Join(sub, de.Name())
			e, why := s.check(path, de.Name())
			if why != "" {
				s.log.Warn("diskdrv: removing a file that is no whole object", "path", path, "why", why)
				_ = os.Remove(path)
				s.dropped++
				continue
			}
			s.index[e.key] = s.lru.PushBack(e)
			s.used += onDisk(e.size)
		}
	}
	return nil
}

// check reads the header of the file at path, named name, and says why
// it is no whole object ("" when it is).
func (s *Store) check(path, name string) (*entry, string) {
	if strings.HasSuffix(name, tmpSuffix) {
		return nil, "a put that never finished"
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err.Error()
	}
	defer f.Close()
	pp := pages.Get().(*[]byte)
	defer pages.Put(pp)
	page := *pp
	if _, err := f.ReadAt(page, 0); err != nil {
		return nil, "a header that cannot be read: " + err.Error()
	}
	key, size, err := decodeHeader(page)
	if err != nil {
		return nil, err.Error()
	}
	if digest(key) != name {
		return nil, "a key whose digest is not the file's name"
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err.Error()
	}
	if st.Size() != onDisk(size) {
		return nil, fmt.Sprintf("%d bytes, its header says %d", st.Size(), onDisk(size))
	}
	return &entry{key: key, name: name, size: size}, ""
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// DirectIO says whether rows whose memory is aligned bypass the page
// cache (the file system takes O_DIRECT and Options allowed it).
func (s *Store) DirectIO() bool { return s.direct }

// Rows returns the rows moved so far with direct I/O and through the
// page cache.
func (s *Store) Rows() (direct, cached int64) { return s.directRows.Load(), s.cachedRows.Load() }

// Dropped is the number of files the open removed as no whole object.
func (s *Store) Dropped() int { return s.dropped }

// Used returns the bytes the objects take, header pages included, and
// the number of objects.
func (s *Store) Used() (bytes int64, objects int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used, len(s.index)
}

// SetCapacity changes the byte limit (0: none); objects beyond it stay.
func (s *Store) SetCapacity(c int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.o.Capacity = max(c, 0)
}

// Close releases the directory's lock. The caller closes every driver
// first.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.lock.Close()
}

// reserve takes room for an object of size bytes under key and marks
// the key written; the verdict says why not (nil entry): Ready for a
// key that holds an object (the first stays), NotReady for one being
// written, Declined for one that does not fit.
func (s *Store) reserve(key string, size int64) (*entry, verdict) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, vFault
	case s.index[key] != nil:
		s.lru.MoveToFront(s.index[key])
		return nil, vReady
	}
	if _, ok := s.writing[key]; ok {
		return nil, vNotReady
	}
	need := onDisk(size)
	if c := s.o.Capacity; c > 0 {
		for s.used+need > c && s.o.Evict && s.lru.Len() > 0 {
			s.evictLocked(s.lru.Back())
		}
		if s.used+need > c {
			return nil, vDeclined
		}
	}
	s.used += need
	s.writing[key] = struct{}{}
	return &entry{key: key, name: digest(key), size: size}, 0
}

// evictLocked removes the object of el: its file first, so that a put
// of the same key never has its new file removed by this eviction. A
// get that opened the file before reads it whole (unlinking leaves an
// open file's bytes).
func (s *Store) evictLocked(el *list.Element) {
	if err := s.removeLocked(el); err != nil {
		s.log.Warn("diskdrv: evicting an object", "key", el.Value.(*entry).key, "err", err)
	}
}

// removeLocked drops the object of el from the index and its room, and
// removes its file.
func (s *Store) removeLocked(el *list.Element) error {
	e := s.lru.Remove(el).(*entry)
	delete(s.index, e.key)
	s.used -= onDisk(e.size)
	if err := os.Remove(objectPath(s.dir, e.name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// commit makes a written object visible; abandon gives its room back.
func (s *Store) commit(e *entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.writing, e.key)
	s.index[e.key] = s.lru.PushFront(e)
}

func (s *Store) abandon(e *entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.writing, e.key)
	s.used -= onDisk(e.size)
}

// find returns key's object for a get, marking it used: Miss for no
// object, NotReady for one being written.
func (s *Store) find(key string) (*entry, verdict) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el := s.index[key]; el != nil {
		s.lru.MoveToFront(el)
		return el.Value.(*entry), vReady
	}
	if _, ok := s.writing[key]; ok {
		return nil, vNotReady
	}
	return nil, vMiss
}

// forget drops key's object from the index when it is still e: its file
// proved damaged on a read.
func (s *Store) forget(e *entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el := s.index[e.key]; el != nil && el.Value.(*entry) == e {
		s.evictLocked(el)
	}
}

// verdict is a row's status as the store decides it.
type verdict = contract.RowStatus

const (
	vReady    = contract.Ready
	vNotReady = contract.NotReady
	vDeclined = contract.Declined
	vMiss     = contract.Miss
	vFault    = contract.Fault
)
