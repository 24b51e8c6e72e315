package fakesdk

import (
	"bytes"
	"fmt"
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
	// Before each row: the faultWorld of four slots.
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
		{"a per-call -900 on a get answers for every key, the missing one too", Fault{Op: Get, Code: mooncakesdk.RPCFail},
			func(t *testing.T, w world) {
				assert.Equal(t, []int64{-900, -900}, get(t, w.c, w.s, []string{"old", "missing"}, 1, 2))
				assert.Equal(t, untouched, w.s.slot(1))
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
		{"a call-level -1 on is-exist narrowed to a key fails the calls carrying it, whole", Fault{Op: Exist, Key: "old", Fail: true},
			func(t *testing.T, w world) {
				assert.Equal(t, []int32{0, 0}, exist(t, w.c, "missing", "new"), "a call without the key is answered")
				res := []int32{7, 7}
				require.ErrorIs(t, w.c.BatchIsExist([]string{"missing", "old"}, res), mooncakesdk.ErrCallFailed)
				assert.Equal(t, []int32{7, 7}, res, "no name of the call answered")
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
		{"register answers a scripted code before recording the region", Fault{Op: Register, Code: mooncakesdk.RPCFail, Times: 1},
			func(t *testing.T, w world) {
				var ce *mooncakesdk.CallError
				require.ErrorAs(t, w.c.RegisterBuffer(w.s.addr(0), slot), &ce)
				assert.Equal(t, mooncakesdk.RPCFail, ce.Code)
				assert.Equal(t, "mooncake_store_register_buffer", ce.Func)
				assert.NoError(t, w.c.RegisterBuffer(w.s.addr(0), slot), "nothing was recorded")
			}},
		{"unregister fails at function level", Fault{Op: Unregister, Fail: true},
			func(t *testing.T, w world) {
				require.NoError(t, w.c.RegisterBuffer(w.s.addr(0), slot))
				require.ErrorIs(t, w.c.UnregisterBuffer(w.s.addr(0)), mooncakesdk.ErrCallFailed)
				assert.ErrorIs(t, w.c.RegisterBuffer(w.s.addr(0), slot), mooncakesdk.ErrCallFailed, "still registered: overlap")
			}},
		{"register answers a scripted code after taking effect", Fault{Op: Register, Code: mooncakesdk.RPCFail, Phase: AfterLanding, Times: 1},
			func(t *testing.T, w world) {
				var ce *mooncakesdk.CallError
				require.ErrorAs(t, w.c.RegisterBuffer(w.s.addr(0), slot), &ce)
				assert.Equal(t, mooncakesdk.RPCFail, ce.Code)
				require.ErrorAs(t, w.c.RegisterBuffer(w.s.addr(0), slot), &ce)
				assert.Equal(t, mooncakesdk.InvalidParams, ce.Code, "registered all the same: overlap")
			}},
		{"unregister fails at function level after forgetting the region", Fault{Op: Unregister, Fail: true, Phase: AfterLanding},
			func(t *testing.T, w world) {
				require.NoError(t, w.c.RegisterBuffer(w.s.addr(0), slot))
				require.ErrorIs(t, w.c.UnregisterBuffer(w.s.addr(0)), mooncakesdk.ErrCallFailed)
				assert.NoError(t, w.c.RegisterBuffer(w.s.addr(0), slot), "the region was forgotten all the same")
			}},
		{"register panics before recording the region", Fault{Op: Register, Panic: true, Times: 1},
			func(t *testing.T, w world) {
				assert.PanicsWithValue(t, "fakesdk: scripted panic in register (before landing)", func() {
					_ = w.c.RegisterBuffer(w.s.addr(0), slot)
				})
				assert.NoError(t, w.c.RegisterBuffer(w.s.addr(0), slot), "nothing was recorded")
			}},
		{"health: master unreachable", Fault{Op: Health, Code: 2},
			func(t *testing.T, w world) {
				assert.ErrorIs(t, w.c.HealthCheck(), mooncakesdk.ErrUnhealthy)
			}},
		{"health: not initialised", Fault{Op: Health, Code: 1},
			func(t *testing.T, w world) {
				assert.ErrorIs(t, w.c.HealthCheck(), mooncakesdk.ErrUnhealthy)
			}},
		{"health: -1", Fault{Op: Health, Code: mooncakesdk.InternalError},
			func(t *testing.T, w world) {
				assert.ErrorIs(t, w.c.HealthCheck(), mooncakesdk.ErrCallFailed)
			}},
		{"health: an answer the library does not document", Fault{Op: Health, Code: 3},
			func(t *testing.T, w world) {
				err := w.c.HealthCheck()
				assert.ErrorIs(t, err, mooncakesdk.ErrCallFailed)
				assert.NotErrorIs(t, err, mooncakesdk.ErrUnhealthy)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, s := faultWorld(t, Options{}, 4)
			w := world{st: st, c: st.Client(), s: s}
			require.NoError(t, st.Script(tc.fault))
			tc.run(t, w)
		})
	}
}

// TestRPCFaultAtEachPhase: -900 and -901 strike a put or a get before
// or after the data moved; only what the phase says has moved.
func TestRPCFaultAtEachPhase(t *testing.T) {
	for _, op := range []Op{Put, Get} {
		for _, code := range []mooncakesdk.Code{mooncakesdk.RPCFail, mooncakesdk.RPCTimeout} {
			for _, phase := range []Phase{BeforeLanding, AfterLanding} {
				t.Run(fmt.Sprintf("%v/%v/%s", op, code, phaseWords(phase)), func(t *testing.T) {
					st, s := faultWorld(t, Options{}, 2)
					require.NoError(t, st.Script(Fault{Op: op, Code: code, Phase: phase}))
					c := st.Client()
					landed := phase == AfterLanding

					if op == Put {
						assert.Equal(t, []int64{int64(code)}, put(t, c, s, []string{"new"}, 0))
						obj, stored := st.Object("new")
						assert.Equal(t, landed, stored, "the object is stored only if the put's end reached the master")
						if landed {
							assert.Equal(t, s.slot(0), obj)
						}
						wantUsed := int64(slot) // "old"
						if landed {
							wantUsed += slot
						}
						assert.Equal(t, wantUsed, st.Used(), "a claim that did not land is given back")
						return
					}
					assert.Equal(t, []int64{int64(code)}, get(t, c, s, []string{"old"}, 1))
					want := byte(0xEE) // untouched
					if landed {
						want = 0x0D
					}
					assert.Equal(t, bytes.Repeat([]byte{want}, slot), s.slot(1), "the buffer is written only after landing")
				})
			}
		}
	}
}

// TestTransferStillRunning: -800 while the transfer goes on; the buffer
// is touched only when the test opens the Running gate, and a put that
// answered -800 never stores its object.
func TestTransferStillRunning(t *testing.T) {
	for _, tc := range []struct {
		name       string
		op         Op
		call       func(t *testing.T, c *Client, s *slab) []int64
		whileRuns  func(t *testing.T, st *Store, c *Client, s *slab)
		afterItEnd func(t *testing.T, st *Store, c *Client, s *slab)
	}{
		{"get: the buffer is written after the call answered", Get,
			func(t *testing.T, c *Client, s *slab) []int64 { return get(t, c, s, []string{"old"}, 1) },
			func(t *testing.T, st *Store, c *Client, s *slab) {
				assert.Equal(t, bytes.Repeat([]byte{0xEE}, slot), s.slot(1), "not written yet")
			},
			func(t *testing.T, st *Store, c *Client, s *slab) {
				assert.Equal(t, bytes.Repeat([]byte{0x0D}, slot), s.slot(1), "written after the call answered")
			}},
		{"put: the buffer is read after the call answered, nothing is stored", Put,
			func(t *testing.T, c *Client, s *slab) []int64 { return put(t, c, s, []string{"new"}, 0) },
			func(t *testing.T, st *Store, c *Client, s *slab) {
				assert.Equal(t, []int32{0}, exist(t, c, "new"))
				assert.Equal(t, int64(slot), st.Used(), "the master revoked the claim")
			},
			func(t *testing.T, st *Store, c *Client, s *slab) {
				assert.Equal(t, []int32{0}, exist(t, c, "new"), "a put that answered -800 stores nothing")
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// In a bubble: the call answers after the TCP transfer
			// timeout, on synctest's clock.
			synctest.Test(t, func(t *testing.T) {
				st, s := faultWorld(t, Options{}, 2)
				running := NewGate()
				require.NoError(t, st.Script(Fault{Op: tc.op, Code: mooncakesdk.TransferFail, Running: running}))
				c := st.Client()

				start := time.Now()
				assert.Equal(t, []int64{-800}, tc.call(t, c, s))
				assert.Equal(t, DefaultTCPTransferTimeout, time.Since(start), "-800 after the TCP status-frame timeout")
				<-running.Reached()
				assert.Equal(t, 1, st.Running(), "the transfer outlived its call")
				tc.whileRuns(t, st, c, s)

				running.Open()
				running.Wait()
				assert.Equal(t, 0, st.Running())
				tc.afterItEnd(t, st, c, s)
			})
		})
	}
}

// TestHeldCallWaitsForItsGate: a held call of each kind answers only once
// its gate opens, and takes effect then.
func TestHeldCallWaitsForItsGate(t *testing.T) {
	for _, tc := range []struct {
		op    Op
		call  func(c *Client, s *slab) error
		after func(t *testing.T, st *Store, c *Client, s *slab)
	}{
		{Put, func(c *Client, s *slab) error {
			return c.BatchPutFrom([]string{"new"}, s.addrs(0), s.sizes(1), make([]int64, 1))
		}, func(t *testing.T, st *Store, c *Client, s *slab) {
			assert.Equal(t, []int32{1}, exist(t, c, "new"))
		}},
		{Get, func(c *Client, s *slab) error {
			return c.BatchGetInto([]string{"old"}, s.addrs(1), s.sizes(1), make([]int64, 1))
		}, func(t *testing.T, st *Store, c *Client, s *slab) {
			assert.Equal(t, bytes.Repeat([]byte{0x0D}, slot), s.slot(1))
		}},
		{Exist, func(c *Client, s *slab) error {
			return c.BatchIsExist([]string{"old"}, make([]int32, 1))
		}, func(t *testing.T, st *Store, c *Client, s *slab) {}},
		{Register, func(c *Client, s *slab) error {
			return c.RegisterBuffer(s.addr(0), slot)
		}, func(t *testing.T, st *Store, c *Client, s *slab) {
			assert.True(t, c.registered(s.addr(0), slot))
		}},
		{Unregister, func(c *Client, s *slab) error {
			return c.UnregisterBuffer(s.addr(1))
		}, func(t *testing.T, st *Store, c *Client, s *slab) {
			assert.False(t, c.registered(s.addr(1), slot))
		}},
		{Health, func(c *Client, s *slab) error {
			return c.HealthCheck()
		}, func(t *testing.T, st *Store, c *Client, s *slab) {}},
	} {
		t.Run(tc.op.String(), func(t *testing.T) {
			// In a bubble, so that synctest.Wait sees the call either
			// blocked at its gate or finished.
			synctest.Test(t, func(t *testing.T) {
				st, s := faultWorld(t, Options{}, 2)
				c := st.Client()
				require.NoError(t, c.RegisterBuffer(s.addr(1), slot))
				gate := NewGate()
				require.NoError(t, st.Script(Fault{Op: tc.op, Hold: gate, Times: 1}))

				done := make(chan error, 1)
				go func() { done <- tc.call(c, s) }()
				<-gate.Reached()
				synctest.Wait() // the call is blocked at its gate, or has answered
				select {
				case err := <-done:
					t.Fatalf("the held %v answered (%v) before its gate opened", tc.op, err)
				default:
				}
				gate.Open()
				require.NoError(t, <-done)
				tc.after(t, st, c, s)
			})
		})
	}
}

// TestLatency: every put, get and exist call takes the store's latency,
// and a put is in flight for all of it; register, unregister and health
// take none. The clock is synctest's fake one, so the durations are
// exact, not timed.
func TestLatency(t *testing.T) {
	const latency = time.Millisecond
	for _, tc := range []struct {
		op   Op
		want time.Duration
		call func(t *testing.T, c *Client, s *slab)
	}{
		{Put, latency, func(t *testing.T, c *Client, s *slab) { put(t, c, s, []string{"k"}, 0) }},
		{Get, latency, func(t *testing.T, c *Client, s *slab) { get(t, c, s, []string{"old"}, 0) }},
		{Exist, latency, func(t *testing.T, c *Client, s *slab) { exist(t, c, "old") }},
		{Register, 0, func(t *testing.T, c *Client, s *slab) { require.NoError(t, c.RegisterBuffer(s.addr(0), slot)) }},
		{Unregister, 0, func(t *testing.T, c *Client, s *slab) {
			require.ErrorIs(t, c.UnregisterBuffer(s.addr(0)), mooncakesdk.ErrCallFailed)
		}},
		{Health, 0, func(t *testing.T, c *Client, s *slab) { require.NoError(t, c.HealthCheck()) }},
	} {
		t.Run(tc.op.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := New(Options{Latency: latency})
				_, err := st.Seed("old", []byte("bytes"))
				require.NoError(t, err)
				c, s := st.Client(), newSlab(t, 1, slot)
				start := time.Now()
				tc.call(t, c, s)
				assert.Equal(t, tc.want, time.Since(start))
			})
		})
	}
	t.Run("a put is in flight for its latency", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			st := New(Options{Latency: latency})
			s := newSlab(t, 2, slot)
			writer, reader := st.Client(), st.Client()
			start := time.Now()
			done := make(chan []int64)
			go func() { done <- put(t, writer, s, []string{"k"}, 0) }()
			synctest.Wait() // the put sleeps, its key claimed

			assert.Equal(t, []int64{-703}, get(t, reader, s, []string{"k"}, 1), "in flight during the latency")
			assert.Equal(t, latency, time.Since(start), "the get took the latency too")
			assert.Equal(t, []int64{0}, <-done)
			assert.Equal(t, []int32{1}, exist(t, reader, "k"))
		})
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
		"vanish and a code":       {Op: Get, Vanish: true, Code: -800},
		"vanish on a register":    {Op: Register, Vanish: true},
		"vanish on health":        {Op: Health, Vanish: true},
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

// TestDestroyEndsTransfersStillRunning: a get that answered -800 with
// its transfer still running is ended by the client's Destroy, which
// returns only once it has; opening the gate afterwards writes nothing.
func TestDestroyEndsTransfersStillRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, s := faultWorld(t, Options{TransferTimeout: -1}, 2)
		running := NewGate()
		require.NoError(t, st.Script(Fault{Op: Get, Code: mooncakesdk.TransferFail, Running: running}))
		c := st.Client()
		assert.Equal(t, []int64{-800}, get(t, c, s, []string{"old"}, 1))
		<-running.Reached()
		require.Equal(t, 1, st.Running())

		require.NoError(t, c.Destroy())
		assert.Zero(t, st.Running(), "Destroy returned once the transfer ended")
		running.Open()
		running.Wait()
		assert.Equal(t, bytes.Repeat([]byte{0xEE}, slot), s.slot(1), "a transfer its client's Destroy ended writes nothing")
	})
}
