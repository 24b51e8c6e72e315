package mooncakedrv

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
	"github.com/kvshare/kvshare/patience"
)

// sharing is a driver over a recording client of a fake store, with one
// worker by default, so the parts admitted while a held call occupies it
// queue and are taken together once it returns.
type sharing struct {
	t     *testing.T
	store *fakesdk.Store
	rec   *recordingClient
	drv   *Driver
	mem   *memory
	reg   contract.Registration
	stem  keys.Stem
	next  int // the next free slot
}

func newSharing(t *testing.T, cfg Config) *sharing {
	t.Helper()
	store := fakesdk.New(fakesdk.Options{})
	rec := newRecordingClient(store.Client())
	cfg.Logger = slog.New(slog.DiscardHandler)
	if cfg.Workers == 0 {
		cfg.Workers = 1
	}
	drv, err := New(rec, cfg)
	require.NoError(t, err)
	mem := newMemory(t, 32, slotBytes)
	reg, err := drv.Register(mem.region)
	require.NoError(t, err)
	stem, err := keys.NewStem("share")
	require.NoError(t, err)
	return &sharing{t: t, store: store, rec: rec, drv: drv, mem: mem, reg: reg, stem: stem}
}

func (s *sharing) key(name string) string {
	k, err := s.stem.Key([]byte(name))
	require.NoError(s.t, err)
	return k
}

// seed stores name's object: pattern(seed).
func (s *sharing) seed(name string, seed byte) {
	ok, err := s.store.Seed(s.key(name), pattern(seed, slotBytes))
	require.NoError(s.t, err)
	require.True(s.t, ok)
}

// pending is an admitted operation, its slots and its change channel.
type pending struct {
	op      contract.Operation
	slots   []int
	changed <-chan struct{}
}

// submit admits an operation of dir over names, each row in a fresh
// slot (filled with fill+row for a put, 0xEE for a get).
func (s *sharing) submit(dir contract.Direction, fill byte, names ...string) *pending {
	s.t.Helper()
	b := contract.RowBatch{Keys: s.stem}
	var slots []int
	for i, n := range names {
		slot := s.next
		s.next++
		if dir == contract.PutDir {
			s.mem.fill(slot, fill+byte(i))
		} else {
			for k := range s.mem.slot(slot) {
				s.mem.slot(slot)[k] = 0xEE
			}
		}
		slots = append(slots, slot)
		b.Rows = append(b.Rows, contract.Row{Name: []byte(n), Spans: []contract.Span{s.mem.region.Slot(slot)}})
	}
	f, ch := notify()
	var op contract.Operation
	var err error
	if dir == contract.PutDir {
		op, err = s.drv.Put(b, f)
	} else {
		op, err = s.drv.Get(b, nil, f)
	}
	require.NoError(s.t, err)
	return &pending{op: op, slots: slots, changed: ch}
}

// hold admits an operation of dir whose one call is held inside the
// store, occupying the worker until the gate opens.
func (s *sharing) hold(dir contract.Direction) (*pending, *fakesdk.Gate) {
	s.t.Helper()
	g := fakesdk.NewGate()
	op := fakesdk.Get
	if dir == contract.PutDir {
		op = fakesdk.Put
	} else {
		s.seed("hold", 99)
	}
	require.NoError(s.t, s.store.Script(fakesdk.Fault{Op: op, Key: s.key("hold"), Hold: g, Times: 1}))
	p := s.submit(dir, 1, "hold")
	if !patience.For(s.t).Wait(g.Reached()) {
		s.t.Fatal("the held call never reached the store")
	}
	return p, g
}

// calls returns the keys of each call of kind made so far, in order.
func (s *sharing) calls(kind sdkKind) [][]string {
	var out [][]string
	for _, c := range s.rec.callsMade() {
		if c.kind == kind {
			out = append(out, c.names)
		}
	}
	return out
}

// callSizes returns how many keys each call of kind carried.
func (s *sharing) callSizes(kind sdkKind) []int {
	var out []int
	for _, c := range s.calls(kind) {
		out = append(out, len(c))
	}
	return out
}

// close drains, unregisters and closes the driver.
func (s *sharing) close() {
	s.t.Helper()
	closeDriver(s.t, s.drv, s.reg)
}

func TestQueuedGetsShareOneCallEachRowWithItsOwnVerdict(t *testing.T) {
	s := newSharing(t, Config{})
	held, gate := s.hold(contract.GetDir)
	var ops []*pending
	for i := range 4 {
		var names []string
		for r := range 4 {
			n := fmt.Sprintf("g%d-%d", i, r)
			names = append(names, n)
			if r%2 == 0 {
				s.seed(n, byte(10*i+r))
			}
		}
		ops = append(ops, s.submit(contract.GetDir, 0, names...))
	}
	gate.Open()
	assert.Equal(t, contract.Ended, settle(t, held.op, held.changed).Access)
	for i, p := range ops {
		st := settle(t, p.op, p.changed)
		assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Miss, contract.Ready, contract.Miss}, st.Rows, "op %d", i)
		assert.Equal(t, contract.Ended, st.Access, "op %d", i)
		for r, slot := range p.slots {
			want := pattern(byte(10*i+r), slotBytes)
			if r%2 == 1 {
				want = s.mem.slot(slot) // untouched below
				assert.Equal(t, byte(0xEE), s.mem.slot(slot)[0], "op %d row %d: a Miss leaves its slot untouched", i, r)
			}
			assert.Equal(t, want, s.mem.slot(slot), "op %d row %d", i, r)
		}
	}
	assert.Equal(t, []int{1, 16}, s.callSizes(kindGet), "the four queued operations went as one call")
	st := s.drv.Stats()
	assert.EqualValues(t, 2, st.Calls)
	assert.EqualValues(t, 5, st.Parts)
	assert.EqualValues(t, 1, st.CallsShared)
	assert.EqualValues(t, 4, st.PartsShared)
	assert.Zero(t, st.PartsUnprovableShared)
	s.close()
}

func TestASharedCallStaysWithinTheCaps(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   Config
		ops   int
		rows  int
		calls []int
	}{
		{"rows per call", Config{RowsPerCall: 7}, 4, 3, []int{1, 6, 6}},
		{"bytes per call", Config{BytesPerCall: 2 * slotBytes}, 5, 1, []int{1, 2, 2, 1}},
		{"a part at the cap alone", Config{RowsPerCall: 3}, 3, 3, []int{1, 3, 3, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSharing(t, tc.cfg)
			held, gate := s.hold(contract.GetDir)
			var ops []*pending
			for i := range tc.ops {
				var names []string
				for r := range tc.rows {
					n := fmt.Sprintf("c%d-%d", i, r)
					s.seed(n, byte(i+r))
					names = append(names, n)
				}
				ops = append(ops, s.submit(contract.GetDir, 0, names...))
			}
			gate.Open()
			settle(t, held.op, held.changed)
			for i, p := range ops {
				st := settle(t, p.op, p.changed)
				for r, v := range st.Rows {
					assert.Equal(t, contract.Ready, v, "op %d row %d", i, r)
				}
			}
			assert.Equal(t, tc.calls, s.callSizes(kindGet))
			s.close()
		})
	}
}

func TestAKeyNeverGoesTwiceIntoOneCall(t *testing.T) {
	t.Run("get", func(t *testing.T) {
		s := newSharing(t, Config{})
		for i, n := range []string{"k1", "k2", "k3", "k4"} {
			s.seed(n, byte(i+1))
		}
		held, gate := s.hold(contract.GetDir)
		a := s.submit(contract.GetDir, 0, "k1", "k2")
		b := s.submit(contract.GetDir, 0, "k2", "k3")
		c := s.submit(contract.GetDir, 0, "k4")
		gate.Open()
		settle(t, held.op, held.changed)
		for _, p := range []*pending{a, b, c} {
			st := settle(t, p.op, p.changed)
			for r, v := range st.Rows {
				assert.Equal(t, contract.Ready, v, "row %d", r)
			}
		}
		assert.Equal(t, pattern(2, slotBytes), s.mem.slot(a.slots[1]), "k2 landed in a's slot")
		assert.Equal(t, pattern(2, slotBytes), s.mem.slot(b.slots[0]), "k2 landed in b's slot")
		assert.Equal(t, [][]string{{s.key("hold")}, {s.key("k1"), s.key("k2"), s.key("k4")}, {s.key("k2"), s.key("k3")}},
			s.calls(kindGet), "the operation repeating k2 waits for a call of its own; the one after it joins the first")
		s.close()
	})
	t.Run("put", func(t *testing.T) {
		s := newSharing(t, Config{})
		held, gate := s.hold(contract.PutDir)
		a := s.submit(contract.PutDir, 10, "x1", "x2")
		b := s.submit(contract.PutDir, 20, "x3", "x2") // x2: a put of this driver is writing it
		c := s.submit(contract.PutDir, 30, "x4")
		gate.Open()
		settle(t, held.op, held.changed)
		want := [][]contract.RowStatus{{contract.Ready, contract.Ready}, {contract.Ready, contract.NotReady}, {contract.Ready}}
		for i, p := range []*pending{a, b, c} {
			st := settle(t, p.op, p.changed)
			assert.Equal(t, want[i], st.Rows, "op %d", i)
			assert.Equal(t, contract.Ended, st.Access, "op %d", i)
		}
		for name, slot := range map[string]int{"x1": a.slots[0], "x2": a.slots[1], "x3": b.slots[0], "x4": c.slots[0]} {
			obj, ok := s.store.Object(s.key(name))
			require.True(t, ok, name)
			assert.Equal(t, s.mem.slot(slot), obj, "%s holds the bytes of the put that wrote it", name)
		}
		shared := []string{s.key("x1"), s.key("x2"), s.key("x3"), s.key("x4")}
		assert.Equal(t, [][]string{{s.key("hold")}, shared}, s.calls(kindPut), "one put-from for the three queued puts, x2 once")
		assert.Equal(t, [][]string{{s.key("hold")}, shared}, s.calls(kindExists), "one exists-check confirming them")
		st := s.drv.Stats()
		assert.EqualValues(t, 2, st.CallsShared, "the put-from and its exists-check")
		assert.EqualValues(t, 3, st.PartsShared)
		s.close()
	})
}

func TestATransferFailInASharedCallMakesEveryPartInItUnprovable(t *testing.T) {
	s := newSharing(t, Config{})
	for _, n := range []string{"a0", "a1", "b0", "c0", "c1"} {
		s.seed(n, 7)
	}
	require.NoError(t, s.store.Script(fakesdk.Fault{Op: fakesdk.Get, Key: s.key("b0"), Code: mooncakesdk.TransferFail}))
	held, gate := s.hold(contract.GetDir)
	a := s.submit(contract.GetDir, 0, "a0", "a1")
	b := s.submit(contract.GetDir, 0, "b0")
	c := s.submit(contract.GetDir, 0, "c0", "c1")
	gate.Open()
	assert.Equal(t, contract.Ended, settle(t, held.op, held.changed).Access, "the held call was a call of its own")
	want := [][]contract.RowStatus{{contract.Ready, contract.Ready}, {contract.Fault}, {contract.Ready, contract.Ready}}
	for i, p := range []*pending{a, b, c} {
		st := settle(t, p.op, p.changed)
		assert.Equal(t, want[i], st.Rows, "op %d: every row keeps its own verdict", i)
		assert.Equal(t, contract.Unprovable, st.Access, "op %d: the store answered the call as one; -800 proves no transfer of it ended", i)
	}
	st := s.drv.Stats()
	assert.EqualValues(t, 3, st.OpsUnprovable)
	assert.EqualValues(t, 5, st.RowsUnprovable)
	assert.EqualValues(t, 2, st.PartsUnprovableShared, "a and c: unprovable through the call they shared with b")
	assert.EqualValues(t, 1, st.CallsShared)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond) // an input: Drain must give up
	defer cancel()
	assert.False(t, s.drv.Drain(ctx), "the memory of every part in the call is kept")
}

func TestASharedCallFailingAsAWholeFaultsEveryPartInIt(t *testing.T) {
	for name, f := range map[string]fakesdk.Fault{
		"-1":    {Op: fakesdk.Put, Fail: true},
		"panic": {Op: fakesdk.Put, Panic: true},
	} {
		t.Run(name, func(t *testing.T) {
			s := newSharing(t, Config{})
			held, gate := s.hold(contract.PutDir)
			f.Key = s.key("y2")
			require.NoError(t, s.store.Script(f))
			a := s.submit(contract.PutDir, 10, "y1")
			b := s.submit(contract.PutDir, 20, "y2", "y3")
			gate.Open()
			assert.Equal(t, contract.Ended, settle(t, held.op, held.changed).Access)
			for i, p := range []*pending{a, b} {
				st := settle(t, p.op, p.changed)
				for r, v := range st.Rows {
					assert.Equal(t, contract.Fault, v, "op %d row %d", i, r)
				}
				assert.Equal(t, contract.Unprovable, st.Access, "op %d", i)
			}
			assert.Equal(t, []int{1, 3}, s.callSizes(kindPut))
			assert.Equal(t, []int{1}, s.callSizes(kindExists), "no exists-check follows a put-from that failed as a whole")
			assert.EqualValues(t, 2, s.drv.Stats().PartsUnprovableShared)
		})
	}
}

func TestCallPerPartSharesNoCall(t *testing.T) {
	s := newSharing(t, Config{CallPerPart: true})
	held, gate := s.hold(contract.GetDir)
	var ops []*pending
	for i := range 3 {
		s.seed(fmt.Sprint("p", i), byte(i))
		ops = append(ops, s.submit(contract.GetDir, 0, fmt.Sprint("p", i)))
	}
	gate.Open()
	settle(t, held.op, held.changed)
	for _, p := range ops {
		assert.Equal(t, []contract.RowStatus{contract.Ready}, settle(t, p.op, p.changed).Rows)
	}
	assert.Equal(t, []int{1, 1, 1, 1}, s.callSizes(kindGet))
	assert.Zero(t, s.drv.Stats().CallsShared)
	s.close()
}

func TestAKeyLeftOpenIsDecidedThoughItsGroupsPutFailed(t *testing.T) {
	s := newSharing(t, Config{})
	require.NoError(t, s.store.Script(fakesdk.Fault{Op: fakesdk.Put, Key: s.key("open"), Code: mooncakesdk.RPCFail, Times: 1}))
	first := s.submit(contract.PutDir, 1, "open")
	require.Equal(t, []contract.RowStatus{contract.Fault}, settle(t, first.op, first.changed).Rows, "RPC_FAIL leaves the key open")
	require.EqualValues(t, 1, s.drv.Stats().KeysLeftOpen)

	held, gate := s.hold(contract.PutDir)
	require.NoError(t, s.store.Script(fakesdk.Fault{Op: fakesdk.Put, Key: s.key("z1"), Fail: true}))
	failing := s.submit(contract.PutDir, 10, "z1")
	open := s.submit(contract.PutDir, 20, "open") // left open: only the exists-check decides it
	gate.Open()
	settle(t, held.op, held.changed)
	st := settle(t, failing.op, failing.changed)
	assert.Equal(t, []contract.RowStatus{contract.Fault}, st.Rows)
	assert.Equal(t, contract.Unprovable, st.Access)
	st = settle(t, open.op, open.changed)
	assert.Equal(t, []contract.RowStatus{contract.Declined}, st.Rows, "no object stands behind the key left open: the exists-check said so")
	assert.Equal(t, contract.Ended, st.Access, "its part made no put-from")
	assert.Equal(t, [][]string{{s.key("open")}, {s.key("hold")}, {s.key("z1")}}, s.calls(kindPut))
	assert.Equal(t, [][]string{{s.key("hold")}, {s.key("open")}}, s.calls(kindExists))
}
