package fakesdk

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// The real store's timeouts that shape the fake's answers (see
// [Options]).
const (
	// DefaultDiscardTimeout is the master's put_start_discard_timeout_sec
	// default: a put in flight for this long can be overtaken.
	DefaultDiscardTimeout = 30 * time.Second
	// DefaultTCPTransferTimeout is MC_TCP_STATUS_TIMEOUT_SEC's default:
	// over TCP a transfer whose status frame has not come answers
	// TRANSFER_FAIL after this long, the transfer perhaps still running.
	DefaultTCPTransferTimeout = 30 * time.Second
	// RDMATransferTimeout is the store's fixed cap on waiting for a
	// transfer, which is what ends a stuck transfer over RDMA.
	RDMATransferTimeout = 60 * time.Second
)

// Options shape a Store. The zero Options is a TCP pool without limit,
// with the real store's default timeouts.
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
	// DiscardTimeout is the master's put_start_discard_timeout_sec. A
	// put of a key whose earlier put is still in flight answers 0 and
	// stores nothing while that put began less than DiscardTimeout ago;
	// after that, the new put discards the stale claim and stores its
	// own bytes (and the overtaken put, when it ends, stores nothing). 0
	// means [DefaultDiscardTimeout]; a negative value, that a claim is
	// stale at once.
	DiscardTimeout time.Duration
	// TransferTimeout is how long a call whose transfer is stuck (a
	// [Fault] with Running) waits before it answers. 0 means the
	// store's: [DefaultTCPTransferTimeout] (30 s) over TCP,
	// [RDMATransferTimeout] (60 s) with RDMA; a negative value, no wait.
	TransferTimeout time.Duration
}

// discardTimeout is the option with its default filled in.
func (o Options) discardTimeout() time.Duration {
	if o.DiscardTimeout == 0 {
		return DefaultDiscardTimeout
	}
	return max(o.DiscardTimeout, 0)
}

// transferTimeout is the option with its default filled in.
func (o Options) transferTimeout() time.Duration {
	switch {
	case o.TransferTimeout != 0:
		return max(o.TransferTimeout, 0)
	case o.RDMA:
		return RDMATransferTimeout
	default:
		return DefaultTCPTransferTimeout
	}
}

// Calls counts the client calls that reached the store (well-formed,
// non-empty, on a live client), and Destroy calls. Size counts GetSize
// calls ([mooncakesdk.Sizer]).
type Calls struct {
	Put, Get, Exist, Register, Unregister, Health, Remove, Size, Destroy int
}

// object is a complete object and the client whose put stored it (nil
// for a seeded one: another process's).
type object struct {
	data  []byte
	owner *Client
}

// claim is a put in flight: the key reserved at the master, from since.
// A claim stays in the store's writing map until its put ends, or until
// a later put discards it as stale; its bytes count as used until its
// own put ends either way.
type claim struct {
	key       string
	owner     *Client
	size      uint64
	since     time.Time
	discarded bool
}

// Store is an in-memory Mooncake pool. Its clients ([Store.Client]) share
// its objects, as the clients of one master do. The zero Store is not
// usable; call [New].
type Store struct {
	opts Options

	mu      sync.Mutex
	objects map[string]*object // complete objects
	writing map[string]*claim  // keys a put has claimed and not finished
	used    int64              // bytes of objects plus bytes claimed by puts in flight
	faults  []*scripted
	holds   []*keyHold // the gates of HoldKeys
	calls   Calls
	running int // transfers still running after their call answered
}

// New returns an empty store.
func New(opts Options) *Store {
	return &Store{opts: opts, objects: map[string]*object{}, writing: map[string]*claim{}}
}

// Client returns a new client of the store, set up and with no buffer
// registered.
func (s *Store) Client() *Client {
	return &Client{store: s, regions: map[uintptr]uint64{}, torn: make(chan struct{})}
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
		s.faults = append(s.faults, &scripted{Fault: f})
	}
	return nil
}

// ErrSeed: an object that cannot be stored (empty key or no bytes, as the
// store refuses them).
var ErrSeed = errors.New("fakesdk: cannot seed object")

// Seed stores a complete object as if another client had put it. It does
// not count as a call and, like a put, leaves an existing object and a
// put in flight for less than the discard timeout alone (false); a
// stale put in flight it discards.
func (s *Store) Seed(key string, data []byte) (bool, error) {
	if key == "" || len(data) == 0 {
		return false, fmt.Errorf("%w: key %q with %d bytes", ErrSeed, key, len(data))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.objects[key] != nil || s.inFlight(key) {
		return false, nil
	}
	s.discardStale(key)
	s.objects[key] = &object{data: bytes.Clone(data)}
	s.used += int64(len(data))
	return true, nil
}

// Vanish drops the complete objects under keys, as eviction, a segment
// provider silent past the master's client_ttl, or the destroy of the
// client that mounted their segment does: later gets answer
// OBJECT_NOT_FOUND (-704), exists-checks 0, and a put may store the key
// anew. Puts in flight are left alone. It returns how many objects
// vanished. A [Fault] with Vanish does the same during a call.
func (s *Store) Vanish(keys ...string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.vanish(keys)
}

// size is what get_size answers for key: the size of its complete
// object, REPLICA_IS_NOT_READY while a put of it is in flight (claimed,
// as a get finds it), OBJECT_NOT_FOUND for none.
func (s *Store) size(key string) (int64, mooncakesdk.Code) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch obj := s.objects[key]; {
	case s.writing[key] != nil:
		return 0, mooncakesdk.ReplicaIsNotReady
	case obj == nil:
		return 0, mooncakesdk.ObjectNotFound
	default:
		return int64(len(obj.data)), mooncakesdk.OK
	}
}

// remove deletes the complete object under key and reports whether there
// was one.
func (s *Store) remove(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.vanish([]string{key}) == 1
}

// vanish is Vanish with s.mu held.
func (s *Store) vanish(keys []string) int {
	n := 0
	for _, k := range keys {
		if obj := s.objects[k]; obj != nil {
			delete(s.objects, k)
			s.used -= int64(len(obj.data))
			n++
		}
	}
	return n
}

// Object returns a copy of the complete object under key.
func (s *Store) Object(key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.objects[key]
	if !ok {
		return nil, false
	}
	return bytes.Clone(obj.data), true
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
	case Remove:
		s.calls.Remove++
	case Size:
		s.calls.Size++
	}
}

// straggle runs touch once g opens, as a transfer of c that outlived its
// call, unless c is destroyed first: then the transfer ends untouched.
func (s *Store) straggle(c *Client, g *Gate, touch func()) {
	s.mu.Lock()
	s.running++
	s.mu.Unlock()
	g.transfers.Add(1)
	c.stragglers.Add(1)
	g.arrive()
	go func() {
		select {
		case <-g.open:
			touch()
		case <-c.torn:
		}
		s.mu.Lock()
		s.running--
		s.mu.Unlock()
		g.transfers.Done()
		c.stragglers.Done()
	}()
}
