package mooncakedrv

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/kvshare/kvshare/conformance"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

// fakeSubject is the driver over a fresh fake store, with every hook the
// suite offers: the store's through the fake's faults and key holds,
// Pause through the driver's worker pool (parts stay queued,
// cancellable).
func fakeSubject(cfg Config) func() (*conformance.Subject, error) {
	return func() (*conformance.Subject, error) {
		store := fakesdk.New(fakesdk.Options{TransferTimeout: -1})
		cfg.Logger = slog.New(slog.DiscardHandler)
		cfg.Reopen = func(context.Context) (mooncakesdk.Client, error) { return store.Client(), nil }
		var strays strayGates
		d, err := New(store.Client(), cfg)
		if err != nil {
			return nil, err
		}
		return &conformance.Subject{
			Driver: d,
			Seed:   func(key string, data []byte) { _, _ = store.Seed(key, data) },
			Object: store.Object,
			Writing: func(key string) func([]byte) {
				return otherWriter(store, key)
			},
			Full: func() { mustScript(store, fakesdk.Fault{Op: fakesdk.Put, Code: mooncakesdk.NoAvailableHandle}) },
			Hold: func(dir conformance.Direction) conformance.Gate {
				g := fakesdk.NewGate()
				mustScript(store, fakesdk.Fault{Op: opOf(dir), Hold: g})
				return fakeGate{g}
			},
			// A part's SDK call carries every row of the part, so holding
			// the call of one key holds its other rows too: the gate says
			// which keys its held calls carry.
			HoldKeys: func(dir conformance.Direction, keys ...string) conformance.KeyGate {
				g, err := store.HoldKeys(opOf(dir), keys...)
				if err != nil {
					panic(err) // the suite names keys, in one direction
				}
				return fakeGate{g}
			},
			Crash: func(dir conformance.Direction) { mustScript(store, fakesdk.Fault{Op: opOf(dir), Panic: true}) },
			FailReads: func(keys ...string) {
				for _, k := range keys {
					mustScript(store, fakesdk.Fault{Op: fakesdk.Get, Key: k, Code: mooncakesdk.ChecksumMismatch, Phase: fakesdk.AfterLanding})
				}
			},
			Pause: func() func() { return d.Pause() },
			// An unprovable get answers -800 with its transfer still
			// running: it lands the object when FinishStrays opens its
			// gate, unless the client's Destroy ended it first.
			UnprovableGets: func(keys ...string) {
				for _, k := range keys {
					mustScript(store, fakesdk.Fault{Op: fakesdk.Get, Key: k, Code: mooncakesdk.TransferFail, Running: strays.add()})
				}
			},
			FinishStrays: strays.finish,
			// A lookup is one batch_is_exist: hold the exists-checks of
			// those keys only, since a put's own exists-check (its
			// confirm) is one too and must run on.
			HoldLookups: func(keys ...string) conformance.Gate {
				g, err := store.HoldKeys(fakesdk.Exist, keys...)
				if err != nil {
					panic(err) // the suite names keys
				}
				return fakeGate{g}
			},
			// A lookup is one batch_is_exist: fail the exists-checks
			// carrying those keys as a whole (the library's -1), as a
			// master that does not answer would; the other names of the
			// call go unanswered too.
			FailLookups: func(keys ...string) {
				for _, k := range keys {
					mustScript(store, fakesdk.Fault{Op: fakesdk.Exist, Key: k, Fail: true})
				}
			},
			// A registration that may be live: register_buffer panics
			// once it registered the buffer (the driver registers no
			// batches, so batch is never set).
			FailNextRegistration: func(bool) {
				mustScript(store, fakesdk.Fault{Op: fakesdk.Register, Panic: true, Phase: fakesdk.AfterLanding, Times: 1})
			},
		}, nil
	}
}

// strayGates are the Running gates of the unprovable gets a harness
// scripted.
type strayGates struct {
	mu    sync.Mutex
	gates []*fakesdk.Gate
}

func (s *strayGates) add() *fakesdk.Gate {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := fakesdk.NewGate()
	s.gates = append(s.gates, g)
	return g
}

// finish opens every gate and waits for the transfers at them to end.
func (s *strayGates) finish() {
	s.mu.Lock()
	gates := s.gates
	s.mu.Unlock()
	for _, g := range gates {
		g.Open()
		g.Wait()
	}
}

func opOf(dir conformance.Direction) fakesdk.Op {
	if dir == conformance.PutDir {
		return fakesdk.Put
	}
	return fakesdk.Get
}

func mustScript(store *fakesdk.Store, f fakesdk.Fault) {
	if err := store.Script(f); err != nil {
		panic(err) // a fault the harness builds is always well formed
	}
}

// fakeGate is a fakesdk gate as the suite holds it.
type fakeGate struct{ g *fakesdk.Gate }

func (f fakeGate) Held(ctx context.Context) error {
	select {
	case <-f.g.Reached():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f fakeGate) Release() { f.g.Open() }

func (f fakeGate) Holding(key string) bool { return f.g.Holding(key) }

// otherWriter stages another client's put of key, one slot of
// suiteSlotBytes, held after it claimed the key: the key is in flight (a
// get answers -703, a put 0 with the exists-check 0) until finish.
// finish(data) lets the put land with data; finish(nil) lets it land and
// makes the object vanish, which leaves the key absent as an abandoned
// write does. The buffer is Go memory: the fake copies from it, and the
// call has returned before finish does.
func otherWriter(store *fakesdk.Store, key string) func([]byte) {
	g := fakesdk.NewGate()
	mustScript(store, fakesdk.Fault{Op: fakesdk.Put, Key: key, Hold: g, Times: 1})
	buf := newGoBuffer(suiteSlotBytes)
	done := make(chan struct{})
	go func() {
		defer close(done)
		results := make([]int64, 1)
		_ = store.Client().BatchPutFrom([]string{key}, []uintptr{buf.addr()}, []uint64{suiteSlotBytes}, results)
	}()
	<-g.Reached()
	var once sync.Once
	return func(data []byte) {
		once.Do(func() {
			copy(buf.bytes, data)
			g.Open()
			<-done
			if data == nil {
				store.Vanish(key)
			}
			buf.free()
		})
	}
}

// suiteSlotBytes is the slot size the suite runs with.
const suiteSlotBytes = 4096

func TestConformanceOverTheFake(t *testing.T) {
	for name, cfg := range map[string]Config{
		"defaults":   {},
		"one worker": {Workers: 1},
		// Parts queued behind a busy worker share its calls by default;
		// here each makes its own.
		"a call a part":     {Workers: 1, CallPerPart: true},
		"parts of two rows": {RowsPerCall: 2, BytesPerCall: 3 * suiteSlotBytes},
		// Every row a call of its own: held-sibling fails one row while
		// the call of the other is held.
		"a row a call": {RowsPerCall: 1},
	} {
		t.Run(name, func(t *testing.T) {
			conformance.Run(t, conformance.Harness{New: fakeSubject(cfg), SlotBytes: suiteSlotBytes})
		})
	}
	// The checks that need the suite to wait out its Wait (a second put
	// while the first is held, late callbacks and writes).
	for name, cfg := range map[string]Config{"thorough": {}, "thorough, a call in flight": {CallsInFlight: 1}} {
		t.Run(name, func(t *testing.T) {
			conformance.Run(t, conformance.Harness{New: fakeSubject(cfg), SlotBytes: suiteSlotBytes, Thorough: true, Wait: time.Second})
		})
	}
}
