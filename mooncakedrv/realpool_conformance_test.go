package mooncakedrv

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kvshare/kvshare/conformance"
	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// realSubject builds conformance subjects over a real pool: each a fresh
// driver (New) over its own view of the run's shared client, with the
// hooks a real store can give:
//
//   - Seed and Object through raw, a second client outside the driver;
//   - Hold at the SDK boundary (suiteClient: the worker's call blocks
//     before it reaches the store, which then serves it);
//   - HoldLookups at the SDK boundary too (lookupView: an exists-check
//     carrying a held key blocks before it reaches the store, as Hold's
//     calls do; the lookup's context may end meanwhile, and the call
//     stays in the driver's count of lookups inside the store until the
//     gate opens and the store answers it);
//   - FailLookups at the SDK boundary (lookupView: an exists-check
//     carrying a failing key fails as a whole, the library's -1, without
//     reaching the store);
//   - Pause through the driver's own worker pool (parts stay queued);
//   - Full when full is not nil (a pool of its own, filled by raw);
//   - FailNextRegistration at the SDK boundary (suiteClient: the next
//     register_buffer reaches the real store, which registers the
//     buffer, and then panics, as the fake's does).
//
// The driver's client is lookupView, which also gives it get_size (the
// shared real client's mooncakesdk.Sizer), so that its lookups ask the
// first key answering 0 once more, as over an unwrapped client.
//
// The others stay nil, and the checks that need them skip, saying so:
// HoldKeys (suiteClient holds every call of a direction, not the calls
// of chosen keys; held-sibling runs over the fake), Writing (a real
// store holds another writer's key only until
// put_start_discard_timeout_sec, and only a writer frozen mid-transfer
// holds it at all: TestRealOvertakenPut stages that), Crash and FailReads
// (a real store cannot be made to crash or fail one call, or the reads of
// chosen keys, without losing the pool), UnprovableGets (only a frozen
// provider makes -800, for every key and after MC_TCP_STATUS_TIMEOUT_SEC,
// and loses its objects past its TTL: TestRealFrozenProvider). Every one
// of them is staged over the fake (TestConformanceOverTheFake).
func realSubject(t *testing.T, sc *sharedClient, raw *rawClient, full func()) func() (*conformance.Subject, error) {
	return func() (*conformance.Subject, error) {
		c := sc.view()
		lv := &lookupView{suiteClient: c}
		d, err := New(lv, Config{Logger: testLogger(t)})
		if err != nil {
			return nil, err
		}
		return &conformance.Subject{
			Driver: d,
			Seed: func(key string, data []byte) {
				if err := raw.seed(key, data); err != nil {
					t.Errorf("the Seed hook: %v", err)
				}
			},
			Object: func(key string) ([]byte, bool) {
				data, ok, err := raw.object(key, 2*suiteSlotBytes)
				if err != nil {
					t.Errorf("the Object hook: %v", err)
				}
				return data, ok
			},
			Full:        full,
			Hold:        c.hold,
			Pause:       func() func() { return d.Pause() },
			HoldLookups: lv.holdLookups,
			FailLookups: lv.failLookups,
			// The driver registers no batches, so batch is never set.
			FailNextRegistration: func(bool) { c.failNextRegister() },
		}, nil
	}
}

// lookupView is a conformance subject's client over a real pool: its
// view of the shared client (suiteClient), whose exists-checks carrying
// a key of a HoldLookups gate block at the gate before they reach the
// store, whose exists-checks carrying a key of FailLookups fail, and
// which answers get_size through the shared client.
type lookupView struct {
	*suiteClient

	mu      sync.Mutex
	holds   []heldKeys
	failing map[string]bool
}

// failLookups makes every later exists-check carrying one of keys fail
// as a whole, as the library's -1, without reaching the store.
func (c *lookupView) failLookups(keys ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failing == nil {
		c.failing = map[string]bool{}
	}
	for _, k := range keys {
		c.failing[k] = true
	}
}

// failed returns the error of an exists-check of keys that carries a
// failing key, or nil.
func (c *lookupView) failed(keys []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if slices.ContainsFunc(keys, func(k string) bool { return c.failing[k] }) {
		return &mooncakesdk.CallError{Func: "mooncake_store_batch_is_exist", Code: -1}
	}
	return nil
}

// heldKeys is one HoldLookups gate and the keys whose exists-checks it
// holds.
type heldKeys struct {
	keys []string
	gate *holdGate
}

// holdLookups installs a gate on every later exists-check carrying one
// of keys (a lookup's; a put's confirm of other keys runs on).
func (c *lookupView) holdLookups(keys ...string) conformance.Gate {
	g := newHoldGate()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holds = append(c.holds, heldKeys{keys: slices.Clone(keys), gate: g})
	return g
}

// waitHeld waits at every gate holding one of keys.
func (c *lookupView) waitHeld(keys []string) {
	c.mu.Lock()
	var gates []*holdGate
	for _, h := range c.holds {
		if slices.ContainsFunc(keys, func(k string) bool { return slices.Contains(h.keys, k) }) {
			gates = append(gates, h.gate)
		}
	}
	c.mu.Unlock()
	for _, g := range gates {
		g.wait()
	}
}

func (c *lookupView) BatchIsExistList(keys *mooncakesdk.KeyList, results []int32) error {
	ks := make([]string, keys.Len())
	for i := range ks {
		ks[i] = string(keys.Key(i))
	}
	c.waitHeld(ks)
	if err := c.failed(ks); err != nil {
		return err
	}
	return c.suiteClient.BatchIsExistList(keys, results)
}

func (c *lookupView) BatchIsExist(keys []string, results []int32) error {
	c.waitHeld(keys)
	if err := c.failed(keys); err != nil {
		return err
	}
	return c.suiteClient.BatchIsExist(keys, results)
}

// GetSize is the shared real client's (mooncakesdk.Sizer); ErrClosed
// once the view was destroyed, as its other calls.
func (c *lookupView) GetSize(key string) (int64, error) {
	if err := c.enter(nil); err != nil {
		return 0, err
	}
	s, ok := c.Client.(mooncakesdk.Sizer)
	if !ok {
		return 0, errors.New("the shared client has no get_size")
	}
	return s.GetSize(key)
}

var _ mooncakesdk.Sizer = (*lookupView)(nil)

// The conformance suite on a real pool, every check but full-store (which
// needs a pool of its own: TestRealFullPool). Its summary lists the checks
// run and those skipped, each with its reason.
func TestRealConformance(t *testing.T) {
	s := startRealStore(t, nil)
	raw := openRawClient(t, s)
	sc := openSharedClient(t, s)
	var only []string
	for _, c := range conformance.Checks() {
		if c.Name != "full-store" {
			only = append(only, c.Name)
		}
	}
	conformance.Run(t, conformance.Harness{New: realSubject(t, sc, raw, nil), SlotBytes: suiteSlotBytes, Only: only, Wait: suiteWait, Thorough: true})
}

// A pool whose provider's segment is small (eviction off), filled by a
// raw client: the conformance suite's lookup-failed-put check, whose
// declined case the Full hook stages here (a lookup of a key whose put
// the full pool declined must not read Present), then its full-store
// check, then a put of this test's own, each Declined (-200 →
// Declined). lookup-failed-put runs first: its staging put needs room.
func TestRealFullPool(t *testing.T) {
	s := startRealStore(t, func(o *pool.Options) { o.SegmentSize = smallSegment })
	raw := openRawClient(t, s)
	// fill is the Full hook (called on a goroutine of the suite's) and
	// the declined case's first step: it fills what is left of the pool.
	fill := func() {
		n, err := raw.fill("kvshare-realpool/fill")
		if err != nil {
			t.Errorf("filling the pool: %v", err)
		}
		t.Logf("the pool took %d more objects before it answered -200 to every size", n)
	}
	for _, check := range []string{"lookup-failed-put", "full-store"} {
		t.Run(check, func(t *testing.T) {
			sc := openSharedClient(t, s)
			conformance.Run(t, conformance.Harness{New: realSubject(t, sc, raw, fill), SlotBytes: suiteSlotBytes, Only: []string{check}})
		})
	}
	t.Run("declined", func(t *testing.T) {
		fill()
		testFullPoolDeclines(t, s, raw)
	})
}

// suiteWait is the suite's bound on every wait on the real store (whose
// answers come in milliseconds), and what a thorough run waits out once
// more at its end.
const suiteWait = 5 * time.Second
