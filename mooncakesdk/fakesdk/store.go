package fakesdk

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Options shape a Store.
type Options struct {
	// Capacity is the pool's size in bytes: a put that does not fit
	// beside the stored objects and the puts in flight answers
	// NO_AVAILABLE_HANDLE (-200). 0 means no limit.
	Capacity int64
	// RDMA makes registration matter: a put or get whose buffer does not
	// lie inside one region its client registered answers TRANSFER_FAIL
	// (-800), as the RDMA transport does, having moved nothing. Without
	// RDMA (TCP) registration is not checked.
	RDMA bool
	// Latency is added to every put, get and exist call, after the call
	// claimed its keys (so a put is in flight for that long).
	Latency time.Duration
}

// Calls counts the client calls that reached the store (well-formed,
// non-empty, on a live client), and Destroy calls.
type Calls struct {
	Put, Get, Exist, Register, Unregister, Health, Destroy int
}

// Store is an in-memory Mooncake pool. Its clients ([Store.Client]) share
// its objects, as the clients of one master do. The zero Store is not
// usable; call [New].
type Store struct {
	opts Options

	mu      sync.Mutex
	objects map[string][]byte // complete objects
	writing map[string]bool   // keys a put has claimed and not finished
	used    int64             // bytes of objects plus bytes claimed by puts in flight
	faults  []*scripted
	calls   Calls
	running int // transfers still running after their call answered
}

// New returns an empty store.
func New(opts Options) *Store {
	return &Store{opts: opts, objects: map[string][]byte{}, writing: map[string]bool{}}
}

// Client returns a new client of the store, set up and with no buffer
// registered.
func (s *Store) Client() *Client {
	return &Client{store: s, regions: map[uintptr]uint64{}}
}

// Script adds faults, in order; a call is struck by the first matching
// fault of each kind. The error wraps [ErrScript] and names the fault.
func (s *Store) Script(faults ...Fault) error {
	for i, f := range faults {
		if err := f.check(); err != nil {
			return fmt.Errorf("fault %d: %w", i, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range faults {
		left := f.Times
		if left == 0 {
			left = -1
		}
		s.faults = append(s.faults, &scripted{Fault: f, left: left})
	}
	return nil
}

// ErrSeed: an object that cannot be stored (empty key or no bytes, as the
// store refuses them).
var ErrSeed = errors.New("fakesdk: cannot seed object")

// Seed stores a complete object as if another client had put it. It does
// not count as a call, and, like a put, leaves an existing object alone
// (false).
func (s *Store) Seed(key string, data []byte) (bool, error) {
	if key == "" || len(data) == 0 {
		return false, fmt.Errorf("%w: key %q with %d bytes", ErrSeed, key, len(data))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.objects[key]; ok || s.writing[key] {
		return false, nil
	}
	s.objects[key] = bytes.Clone(data)
	s.used += int64(len(data))
	return true, nil
}

// Object returns a copy of the complete object under key.
func (s *Store) Object(key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.objects[key]
	return bytes.Clone(obj), ok
}

// Used is the bytes of the stored objects plus those claimed by puts in
// flight.
func (s *Store) Used() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// Calls returns the counts of calls so far.
func (s *Store) Calls() Calls {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Running is the number of transfers still running after their call
// answered (see [Fault.Running]); while it is not 0, some lent memory may
// still be touched.
func (s *Store) Running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// count records one call of op.
func (s *Store) count(op Op) {
	switch op {
	case Put:
		s.calls.Put++
	case Get:
		s.calls.Get++
	case Exist:
		s.calls.Exist++
	case Register:
		s.calls.Register++
	case Unregister:
		s.calls.Unregister++
	case Health:
		s.calls.Health++
	}
}

// straggle runs touch once g opens, as a transfer that outlived its call.
func (s *Store) straggle(g *Gate, touch func()) {
	s.mu.Lock()
	s.running++
	s.mu.Unlock()
	g.transfers.Add(1)
	g.arrive()
	go func() {
		<-g.open
		touch()
		s.mu.Lock()
		s.running--
		s.mu.Unlock()
		g.transfers.Done()
	}()
}
