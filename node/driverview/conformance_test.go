package driverview_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/conformance"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/node/driverview"
	"github.com/kvshare/kvshare/patience"
)

// quiet is memdrv's options with its logs (a staged crash logs an error)
// sent nowhere.
func quiet(o memdrv.Options) memdrv.Options {
	o.Logger = slog.New(slog.DiscardHandler)
	return o
}

// errLostAnswer is the registration failure FailNextRegistration stages.
var errLostAnswer = errors.New("the store's answer to the registration was lost")

// viewSubject is the conformance subject of a view over d (a
// TogetherDriver's inner driver when td is set), with every scenario
// hook memdrv can stage on d and its store s.
func viewSubject(v *driverview.View, d *memdrv.Driver, td *memdrv.TogetherDriver, s *memdrv.Store) *conformance.Subject {
	return &conformance.Subject{
		Driver:         v.Driver(),
		Seed:           s.Set,
		Object:         s.Object,
		Writing:        s.BeginWrite,
		Full:           func() { s.SetCapacity(max(s.Bytes(), 1)) },
		Hold:           func(dir conformance.Direction) conformance.Gate { return d.Hold(dir) },
		HoldKeys:       func(dir conformance.Direction, keys ...string) conformance.KeyGate { return d.HoldKeys(dir, keys...) },
		Crash:          d.Crash,
		FailReads:      d.FailReads,
		UnprovableGets: d.UnprovableGets,
		FinishStrays:   func() { d.FinishStrays() },
		Pause:          d.Pause,
		HoldLookups:    func(...string) conformance.Gate { return d.HoldLookups() },
		FailLookups:    d.FailLookups,
		FailNextRegistration: func(batch bool) {
			if batch {
				td.FailNextRegistration(true)
				return
			}
			d.FailNextRegister(&contract.RegistrationError{Registration: 1, Err: errLostAnswer})
		},
	}
}

// neighbour is a second lend over the same shared driver as a check's
// view: a backend bound through a view of its own, with a publish held
// inside the store (busy) or one that ran to its end (idle).
type neighbour struct {
	d       *memdrv.Driver
	mem     *memdrv.Memory
	backend *binding.Backend
	held    contract.Attempt // nil when idle
	gate    *memdrv.Gate
}

// newNeighbour binds memory of its own through a fresh view of d and
// publishes one row: held inside the store when busy is set.
func newNeighbour(d *memdrv.Driver, busy bool) (*neighbour, error) {
	mem, err := memdrv.Alloc(4096, 4, contract.Host)
	if err != nil {
		return nil, err
	}
	n := &neighbour{d: d, mem: mem}
	n.backend, err = binding.Open(context.Background(), binding.Loan{Regions: []contract.SlotRegion{mem.Region}, Hold: nopHold{}},
		driverview.New(d).Driver(), binding.Config{KeyPrefix: "neighbour", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	v := oneRow(0, "neighbour-row")
	if busy {
		key, err := n.backend.Key(v.Groups[0].Names[0])
		if err != nil {
			return nil, err
		}
		n.gate = d.HoldKeys(memdrv.PutDir, key)
	}
	a, err := n.backend.Publish(v, nil)
	if err != nil {
		return nil, err
	}
	if busy {
		n.held = a
		ctx, cancel := context.WithTimeout(context.Background(), patience.Wait())
		defer cancel()
		return n, n.gate.Held(ctx)
	}
	<-a.Done()
	return n, nil
}

// finish lets the neighbour's held row go, checks that the shared driver
// still serves the neighbour (a publish and a fetch back, byte for
// byte), closes the neighbour's backend (its view drained and closed),
// and frees its memory.
func (n *neighbour) finish(t *testing.T) {
	t.Helper()
	ctx, cancel := patience.Bound{Span: patience.Wait(), What: "the neighbour lend finishing", Logf: t.Logf}.Context(context.Background())
	defer cancel()
	if n.held != nil {
		n.gate.Release()
		select {
		case <-n.held.Done():
		case <-ctx.Done():
			t.Fatalf("the neighbour's held publish did not quiesce once let go: %v", ctx.Err())
		}
		out, _ := n.held.Outcome()
		// Its verdict is the store's: a check's store-wide scenario (a
		// crash, a full store) may have made it Fault or Declined. What
		// no check of the view may do is stop the shared driver.
		assert.NotErrorIs(t, out.Fault, contract.ErrDriverRejected, "the neighbour's held row ran to the store's verdict")
	}
	copy(n.mem.Slot(1), strings.Repeat("n", 4096))
	roundTrip(ctx, t, n.backend, n.mem, 1, 2, "neighbour-after")
	require.NoError(t, n.backend.Close(ctx), "the neighbour's backend closes its own view")
	require.NoError(t, n.mem.Free())
}

// roundTrip publishes slot from of mem under name and fetches it back
// into slot to, and checks the bytes.
func roundTrip(ctx context.Context, t *testing.T, b *binding.Backend, mem *memdrv.Memory, from, to int32, name string) {
	t.Helper()
	a, err := b.Publish(oneRow(from, name), nil)
	require.NoError(t, err)
	out, err := a.Wait(ctx)
	require.NoError(t, err)
	<-a.Done()
	require.NotErrorIs(t, out.Fault, contract.ErrDriverRejected, "publish of %s: the shared driver takes work", name)
	if !out.Delivered[0] {
		// A store-wide scenario of the check (a crash, a full store)
		// stays on the shared driver: the publish ran and ended with
		// the store's verdict, which is all the test can ask.
		t.Logf("publish of %s: %v (%v), left by the check's store-wide scenario", name, out.Rows, out.Fault)
		return
	}
	f, err := b.Fetch(oneRow(to, name), nil)
	require.NoError(t, err)
	out, err = f.Wait(ctx)
	require.NoError(t, err)
	<-f.Done()
	require.NotErrorIs(t, out.Fault, contract.ErrDriverRejected, "fetch of %s: the shared driver takes work", name)
	if !out.Delivered[0] {
		t.Logf("fetch of %s: %v (%v), left by the check's store-wide scenario", name, out.Rows, out.Fault)
		return
	}
	assert.Equal(t, mem.Slot(int(from)), mem.Slot(int(to)))
}

// oneRow is a view of one row: slot of region 0, named name.
func oneRow(slot int32, name string) contract.View {
	return contract.View{Groups: []contract.Group{{Slots: []int32{slot}, Names: [][]byte{[]byte(name)}}}}
}

type nopHold struct{}

func (nopHold) Release() {}

// isRecycleCheck names the checks that recycle the driver: a view's
// Recycle recycles the shared client, so a neighbour's row held inside
// the store would hold every one of them up.
func isRecycleCheck(name string) bool {
	return strings.HasPrefix(name, "recycle-") || name == "capabilities-after-faults"
}

func checkNames(keep func(string) bool) []string {
	var names []string
	for _, c := range conformance.Checks() {
		if keep(c.Name) {
			names = append(names, c.Name)
		}
	}
	return names
}

// TestConformance certifies a view with the conformance suite: every
// check runs on a fresh view over a fresh memdrv driver that it shares
// with a neighbour lend (a binding over a view of its own). Outside the
// recycle checks the neighbour's publish is held inside the store
// throughout, so a view that waited for, drained, cancelled or closed the
// shared driver's work, rather than its own, fails; in the recycle checks
// the neighbour is idle, since a view's Recycle recycles the shared
// client. After each run every neighbour is let go and must find the
// shared driver still serving it.
func TestConformance(t *testing.T) {
	notRecycle := func(n string) bool { return !isRecycleCheck(n) }
	for _, c := range []struct {
		name     string
		opts     memdrv.Options
		together bool
		busy     bool // the neighbour's publish is held inside the store
		only     func(string) bool
		thorough bool
	}{
		{"plain", memdrv.Options{Workers: 3}, false, true, notRecycle, false},
		{"plain-recycle", memdrv.Options{}, false, false, isRecycleCheck, false},
		{"together", memdrv.Options{Workers: 3}, true, true, notRecycle, false},
		{"together-recycle", memdrv.Options{}, true, false, isRecycleCheck, false},
		{"capped-multispan-hints", memdrv.Options{Workers: 3, MaxRowsPerOp: 2, MultiSpan: true, Hints: true}, false, true, notRecycle, false},
		{"thorough", memdrv.Options{Workers: 3}, false, true, notRecycle, true},
		{"thorough-recycle", memdrv.Options{}, false, false, isRecycleCheck, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var neighbours []*neighbour
			h := conformance.Harness{
				Only:     checkNames(c.only),
				Thorough: c.thorough,
				Wait:     map[bool]time.Duration{true: time.Second}[c.thorough], // 0: the default
				New: func() (*conformance.Subject, error) {
					s := memdrv.NewStore()
					var d *memdrv.Driver
					var td *memdrv.TogetherDriver
					if c.together {
						td = memdrv.NewTogether(s, quiet(c.opts))
						d = td.Driver
					} else {
						d = memdrv.New(s, quiet(c.opts))
					}
					n, err := newNeighbour(d, c.busy)
					if err != nil {
						return nil, err
					}
					mu.Lock()
					neighbours = append(neighbours, n)
					mu.Unlock()
					var shared contract.Driver = d
					if td != nil {
						shared = td
					}
					return viewSubject(driverview.New(shared), d, td, s), nil
				},
			}
			conformance.Run(t, h)
			for _, n := range neighbours {
				n.finish(t)
			}
		})
	}
}

// TestTwoViewsCertifiedAtOnce runs the suite twice at once, each run's
// every check on a fresh view over ONE shared memdrv driver: each view
// must keep every rule while the other run's views register, move,
// drain and close beside it. The hooks are those that act on the keys a
// check names (which the two runs never share); the hooks that act on
// the whole store (Hold, Pause, Crash, Full, HoldLookups, FinishStrays,
// FailNextRegistration) would stage one run's scenario on the other's
// rows, so they are left out and the checks that need them skip; the
// recycle checks are left to TestConformance, since a Recycle is of the
// shared client.
func TestTwoViewsCertifiedAtOnce(t *testing.T) {
	s := memdrv.NewStore()
	d := memdrv.New(s, quiet(memdrv.Options{Workers: 8}))
	only := checkNames(func(n string) bool { return !isRecycleCheck(n) })
	t.Run("runs", func(t *testing.T) {
		for _, run := range []string{"first", "second"} {
			t.Run(run, func(t *testing.T) {
				t.Parallel()
				conformance.Run(t, conformance.Harness{Only: only, New: func() (*conformance.Subject, error) {
					return &conformance.Subject{
						Driver:         driverview.New(d).Driver(),
						Seed:           s.Set,
						Object:         s.Object,
						Writing:        s.BeginWrite,
						HoldKeys:       func(dir conformance.Direction, keys ...string) conformance.KeyGate { return d.HoldKeys(dir, keys...) },
						FailReads:      d.FailReads,
						UnprovableGets: d.UnprovableGets,
						FailLookups:    d.FailLookups,
					}, nil
				}})
			})
		}
	})
	// The shared driver still serves a lend after both runs.
	n, err := newNeighbour(d, false)
	require.NoError(t, err)
	n.finish(t)
	assert.True(t, slices.ContainsFunc(conformance.Checks(), func(c conformance.Check) bool { return c.Name == "drain-waits-for-rows" }))
}
