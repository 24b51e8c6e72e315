package diskdrv

import (
	"errors"
	"os"
	"runtime"

	"github.com/kvshare/kvshare/contract"
)

// Seed stores data under key as another writer would (through the same
// temporary file and rename as a put, from Go memory, in the page
// cache). It returns the put's verdict.
func (s *Store) Seed(key string, data []byte) contract.RowStatus {
	r := row{s: s, dir: contract.PutDir, key: key, seed: true}
	if len(data) > 0 {
		r.spans = []contract.Span{{Addr: addrOf(data), Len: int64(len(data))}}
	}
	v := r.put()
	runtime.KeepAlive(data)
	return v
}

// Object returns a copy of the complete object under key, read from its
// file, and whether there is one.
func (s *Store) Object(key string) ([]byte, bool) {
	e, v := s.find(key)
	if v != contract.Ready {
		return nil, false
	}
	b, err := os.ReadFile(objectPath(s.dir, e.name))
	if err != nil || int64(len(b)) != onDisk(e.size) {
		return nil, false
	}
	if k, _, err := decodeHeader(b); err != nil || k != key {
		return nil, false
	}
	return b[headerBytes:], true
}

// ErrBusy is returned by BeginWrite for a key that holds an object or
// is being written.
var ErrBusy = errors.New("diskdrv: the key holds an object or is being written")

// BeginWrite makes another writer start writing key: until finish, the
// key reads InFlight and this store's gets and puts of it end NotReady.
// finish(data) completes the object with data, finish(nil) abandons
// it; finish is idempotent.
func (s *Store) BeginWrite(key string) (finish func(data []byte), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.writing[key]; ok || s.index[key] != nil {
		return nil, ErrBusy
	}
	s.writing[key] = struct{}{}
	done := false
	return func(data []byte) {
		s.mu.Lock()
		if done {
			s.mu.Unlock()
			return
		}
		done = true
		delete(s.writing, key)
		s.mu.Unlock()
		if data != nil {
			s.Seed(key, data)
		}
	}, nil
}
