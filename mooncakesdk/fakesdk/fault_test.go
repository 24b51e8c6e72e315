package fakesdk

import (
	"bytes"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScriptedFaults: one row per scripted fault, each checking the
// answer and what moved (the store's object, the get's buffer).
func TestScriptedFaults(t *testing.T) {
	type world struct {
		st *Store
		c  *Client
		s  *slab
	}
	// Before each row: "old" is stored with byte 0x0D; slot 0 holds 0xA1
	// (what a put sends); slots 1–3 hold 0xEE (untouched get buffers).
	untouched := bytes.Repeat([]byte{0xEE}, slot)
	for _, tc := range []struct {
		name  string
		fault Fault
		run   func(t *testing.T, w world)
	}{
		{"-707 on a get after writing", Fault{Op: Get, Key: "old", Code: mooncakesdk.LeaseExpired, Phase: AfterLanding},
			func(t *testing.T, w world) {
				assert.Equal(t, []int64{-707}, get(t, w.c, w.s, []string{"old"}, 1))
				assert.Equal(t, bytes.Repeat([]byte{0x0D}, slot), w.s.slot(1), "written before the lease was found expired")
			}},
		{"-800 on a get, transfer over", Fault{Op: Get, Key: "old", Code: mooncakesdk.TransferFail},
			func(t *testing.T, w world) {
				assert.Equal(t, []int64{-800}, get(t, w.c, w.s, []string{"old"}, 1))
				assert.Equal(t, untouched, w.s.slot(1))
				assert.Equal(t, 0, w.st.Running())
			}},
		{"-800 on a put, transfer over", Fault{Op: Put, Key: "new", Code: mooncakesdk.TransferFail},
			func(t *testing.T, w world) {
				assert.Equal(t, []int64{-800}, put(t, w.c, w.s, []string{"new"}, 0))
				assert.Equal(t, []int32{0}, exist(t, w.c, "new"), "revoked: nothing stored")
				assert.Equal(t, int64(slot), w.st.Used(), "its claim given back")
			}},
		{"-900 on a put before the object landed", Fault{Op: Put, Key: "new", Code: mooncakesdk.RPCFail},
			func(t *testing.T, w world) {
				assert.Equal(t, []int64{-900}, put(t, w.c, w.s, []string{"new"}, 0))
				assert.Equal(t, []int32{0}, exist(t, w.c, "new"))
			}},
		{"-901 on a put after the object landed", Fault{Op: Put, Key: "new", Code: mooncakesdk.RPCTimeout, Phase: AfterLanding},
			func(t *testing.T, w world) {
				assert.Equal(t, []int64{-901}, put(t, w.c, w.s, []string{"new"}, 0))
				assert.Equal(t, []int32{1}, exist(t, w.c, "new"), "the end of the put reached the master")
				obj, _ := w.st.Object("new")
				assert.Equal(t, w.s.slot(0), obj)
			}},
		{"-900 on a get before writing", Fault{Op: Get, Code: mooncakesdk.RPCFail},
			func(t *testing.T, w world) {
				assert.Equal(t, []int64{-900, -900}, get(t, w.c, w.s, []string{"old", "missing"}, 1, 2))
				assert.Equal(t, untouched, w.s.slot(1))
			}},
		{"-901 on a get after writing", Fault{Op: Get, Code: mooncakesdk.RPCTimeout, Phase: AfterLanding},
			func(t *testing.T, w world) {
				assert.Equal(t, []int64{-901}, get(t, w.c, w.s, []string{"old"}, 1))
				assert.Equal(t, bytes.Repeat([]byte{0x0D}, slot), w.s.slot(1))
			}},
		{"-900 on is-exist for one key", Fault{Op: Exist, Key: "old", Code: mooncakesdk.RPCFail},
			func(t *testing.T, w world) {
				assert.Equal(t, []int32{-900, 0}, exist(t, w.c, "old", "missing"))
			}},
		{"a per-call code answers for every key", Fault{Op: Put, Code: mooncakesdk.NoAvailableHandle},
			func(t *testing.T, w world) {
				assert.Equal(t, []int64{-200, -200}, put(t, w.c, w.s, []string{"new", "old"}, 0, 0))
				assert.Equal(t, []int32{0}, exist(t, w.c, "new"))
			}},
		{"function-level -1 before anything moved", Fault{Op: Put, Fail: true},
			func(t *testing.T, w world) {
				res := []int64{7}
				err := w.c.BatchPutFrom([]string{"new"}, w.s.addrs(0), w.s.sizes(1), res)
				var ce *mooncakesdk.CallError
				require.ErrorAs(t, err, &ce)
				assert.ErrorIs(t, err, mooncakesdk.ErrCallFailed)
				assert.Equal(t, mooncakesdk.InternalError, ce.Code)
				assert.Equal(t, "mooncake_store_batch_put_from", ce.Func)
				assert.Equal(t, []int64{7}, res, "no result written")
				assert.Equal(t, []int32{0}, exist(t, w.c, "new"))
			}},
		{"function-level -1 after the data moved", Fault{Op: Get, Fail: true, Phase: AfterLanding},
			func(t *testing.T, w world) {
				res := []int64{7}
				err := w.c.BatchGetInto([]string{"old"}, w.s.addrs(1), w.s.sizes(1), res)
				require.ErrorIs(t, err, mooncakesdk.ErrCallFailed)
				assert.Equal(t, []int64{7}, res)
				assert.Equal(t, bytes.Repeat([]byte{0x0D}, slot), w.s.slot(1), "the buffer was written all the same")
			}},
		{"function-level -1 on is-exist", Fault{Op: Exist, Fail: true},
			func(t *testing.T, w world) {
				res := []int32{7}
				require.ErrorIs(t, w.c.BatchIsExist([]string{"old"}, res), mooncakesdk.ErrCallFailed)
				assert.Equal(t, []int32{7}, res)
			}},
		{"a panic before anything moved", Fault{Op: Put, Panic: true},
			func(t *testing.T, w world) {
				assert.PanicsWithValue(t, "fakesdk: scripted panic in put (before landing)", func() {
					_ = w.c.BatchPutFrom([]string{"new"}, w.s.addrs(0), w.s.sizes(1), make([]int64, 1))
				})
				assert.Equal(t, []int32{0}, exist(t, w.c, "new"))
			}},
		{"a panic after the object landed", Fault{Op: Put, Panic: true, Phase: AfterLanding},
			func(t *testing.T, w world) {
				assert.Panics(t, func() {
					_ = w.c.BatchPutFrom([]string{"new"}, w.s.addrs(0), w.s.sizes(1), make([]int64, 1))
				})
				assert.Equal(t, []int32{1}, exist(t, w.c, "new"))
				assert.NoError(t, w.c.Destroy(), "the client is still usable after the panic")
			}},
		{"a call-level fault narrowed to a key spares other calls", Fault{Op: Get, Key: "old", Fail: true},
			func(t *testing.T, w world) {
				assert.Equal(t, []int64{-704}, get(t, w.c, w.s, []string{"missing"}, 1))
				assert.ErrorIs(t, w.c.BatchGetInto([]string{"missing", "old"}, w.s.addrs(1, 2), w.s.sizes(2), make([]int64, 2)), mooncakesdk.ErrCallFailed)
			}},
		{"Times bounds the strikes", Fault{Op: Exist, Code: mooncakesdk.RPCTimeout, Times: 2},
			func(t *testing.T, w world) {
				assert.Equal(t, []int32{-901}, exist(t, w.c, "old"))
				assert.Equal(t, []int32{-901, -901}, exist(t, w.c, "old", "x"))
				assert.Equal(t, []int32{1}, exist(t, w.c, "old"))
			}},
		{"a per-key code on a key the store would not serve moves nothing", Fault{Op: Get, Key: "missing", Code: mooncakesdk.LeaseExpired, Phase: AfterLanding},
			func(t *testing.T, w world) {
				assert.Equal(t, []int64{-707}, get(t, w.c, w.s, []string{"missing"}, 1))
				assert.Equal(t, untouched, w.s.slot(1))
			}},
		{"register answers a scripted code", Fault{Op: Register, Code: mooncakesdk.InvalidParams},
			func(t *testing.T, w world) {
				var ce *mooncakesdk.CallError
				require.ErrorAs(t, w.c.RegisterBuffer(w.s.addr(0), slot), &ce)
				assert.Equal(t, mooncakesdk.InvalidParams, ce.Code)
				assert.Equal(t, "mooncake_store_register_buffer", ce.Func)
			}},
		{"unregister fails at function level", Fault{Op: Unregister, Fail: true},
			func(t *testing.T, w world) {
				require.NoError(t, w.c.RegisterBuffer(w.s.addr(0), slot))
				require.ErrorIs(t, w.c.UnregisterBuffer(w.s.addr(0)), mooncakesdk.ErrCallFailed)
				assert.ErrorIs(t, w.c.RegisterBuffer(w.s.addr(0), slot), mooncakesdk.ErrCallFailed, "still registered: overlap")
			}},
		{"health: master unreachable", Fault{Op: Health, Code: 2},
			func(t *testing.T, w world) {
				assert.ErrorIs(t, w.c.HealthCheck(), mooncakesdk.ErrUnhealthy)
			}},
		{"health: -1", Fault{Op: Health, Code: mooncakesdk.InternalError},
			func(t *testing.T, w world) {
				assert.ErrorIs(t, w.c.HealthCheck(), mooncakesdk.ErrCallFailed)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := New(Options{})
			w := world{st: st, c: st.Client(), s: newSlab(t, 4, slot)}
			_, err := st.Seed("old", bytes.Repeat([]byte{0x0D}, slot))
			require.NoError(t, err)
			w.s.fill(0, 0xA1)
			for i := 1; i < 4; i++ {
				w.s.fill(i, 0xEE)
			}
			require.NoError(t, st.Script(tc.fault))
			tc.run(t, w)
		})
	}
}

// TestTransferStillRunning: -800 while the transfer goes on; the buffer
// is touched only when the test opens the gate.
func TestTransferStillRunning(t *testing.T) {
	t.Run("get", func(t *testing.T) {
		st := New(Options{})
		s := newSlab(t, 2, slot)
		_, err := st.Seed("k", bytes.Repeat([]byte{0x0D}, slot))
		require.NoError(t, err)
		s.fill(0, 0xEE)
		running := NewGate()
		require.NoError(t, st.Script(Fault{Op: Get, Key: "k", Code: mooncakesdk.TransferFail, Running: running}))
		c := st.Client()

		assert.Equal(t, []int64{-800}, get(t, c, s, []string{"k"}, 0))
		<-running.Reached()
		assert.Equal(t, 1, st.Running())
		assert.Equal(t, bytes.Repeat([]byte{0xEE}, slot), s.slot(0), "not written yet")

		running.Open()
		running.Wait()
		assert.Equal(t, bytes.Repeat([]byte{0x0D}, slot), s.slot(0), "written after the call answered")
		assert.Equal(t, 0, st.Running())
	})
	t.Run("put", func(t *testing.T) {
		st := New(Options{})
		s := newSlab(t, 1, slot)
		running := NewGate()
		require.NoError(t, st.Script(Fault{Op: Put, Code: mooncakesdk.TransferFail, Running: running}))
		c := st.Client()

		assert.Equal(t, []int64{-800}, put(t, c, s, []string{"k"}, 0))
		assert.Equal(t, 1, st.Running(), "still reading the buffer")
		assert.Equal(t, []int32{0}, exist(t, c, "k"))
		assert.Equal(t, int64(0), st.Used())

		running.Open()
		running.Wait()
		assert.Equal(t, 0, st.Running())
		assert.Equal(t, []int32{0}, exist(t, c, "k"), "a put that failed stores nothing")
	})
}

// TestHeldCallWaitsForItsGate: a held call answers only once released.
func TestHeldCallWaitsForItsGate(t *testing.T) {
	st := New(Options{})
	s := newSlab(t, 1, slot)
	_, err := st.Seed("k", bytes.Repeat([]byte{3}, slot))
	require.NoError(t, err)
	gate := NewGate()
	require.NoError(t, st.Script(Fault{Op: Get, Hold: gate}))
	c := st.Client()
	done := make(chan []int64, 1)
	go func() { done <- get(t, c, s, []string{"k"}, 0) }()
	<-gate.Reached()
	select {
	case <-done:
		t.Fatal("the held get answered before its gate opened")
	default:
	}
	gate.Open()
	assert.Equal(t, []int64{slot}, <-done)
	assert.Equal(t, []int64{slot}, get(t, c, s, []string{"k"}, 0), "an open gate holds nothing")
}

// TestLatency: with a latency, a put is in flight for that long. The
// clock is synctest's fake one, so the durations are exact, not timed.
func TestLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := New(Options{Latency: time.Millisecond})
		s := newSlab(t, 2, slot)
		writer, reader := st.Client(), st.Client()
		start := time.Now()
		done := make(chan []int64)
		go func() { done <- put(t, writer, s, []string{"k"}, 0) }()
		synctest.Wait() // the put sleeps, its key claimed

		assert.Equal(t, []int64{-703}, get(t, reader, s, []string{"k"}, 1), "in flight during the latency")
		assert.Equal(t, time.Millisecond, time.Since(start), "the get took the latency too")
		assert.Equal(t, []int64{0}, <-done)
		assert.Equal(t, []int32{1}, exist(t, reader, "k"))
		assert.Equal(t, 2*time.Millisecond, time.Since(start), "the exist call took the latency after them")
	})
}

func TestScriptRefusesFaultsThatMeanNothing(t *testing.T) {
	for name, f := range map[string]Fault{
		"no kind":                 {Op: Put},
		"two kinds":               {Op: Put, Code: -800, Fail: true},
		"unknown op":              {Op: 99, Fail: true},
		"running without a code":  {Op: Get, Fail: true, Running: NewGate()},
		"running on exist":        {Op: Exist, Code: -800, Running: NewGate()},
		"negative times":          {Op: Get, Code: -900, Times: -1},
		"key on a register fault": {Op: Register, Key: "k", Fail: true},
	} {
		assert.ErrorIs(t, New(Options{}).Script(f), ErrScript, name)
	}
}

func TestCallsCountsWhatReachedTheStore(t *testing.T) {
	st := New(Options{})
	s := newSlab(t, 1, slot)
	c := st.Client()
	put(t, c, s, []string{"k"}, 0)
	get(t, c, s, []string{"k"}, 0)
	get(t, c, s, []string{"k"}, 0)
	exist(t, c, "k")
	require.NoError(t, c.RegisterBuffer(s.addr(0), slot))
	require.NoError(t, c.UnregisterBuffer(s.addr(0)))
	require.NoError(t, c.HealthCheck())
	require.NoError(t, c.Destroy())
	assert.Equal(t, Calls{Put: 1, Get: 2, Exist: 1, Register: 1, Unregister: 1, Health: 1, Destroy: 1}, st.Calls())
}
