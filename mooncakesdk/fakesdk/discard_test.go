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

// TestPutInFlightIsOvertakenAfterTheDiscardTimeout: a put held in flight
// (its key claimed) for the discard timeout; then another put of the
// key discards the stale claim and stores its own bytes, and the held
// put, let go, stores nothing. The clock is synctest's.
func TestPutInFlightIsOvertakenAfterTheDiscardTimeout(t *testing.T) {
	type world struct {
		st      *Store
		first   *Client // whose put is held
		s       *slab   // slot 0: the first put's bytes (1), slot 1: the second's (2)
		started time.Time
	}
	for _, tc := range []struct {
		name string
		opts Options
		// run acts while the first put is held; it returns what the
		// first put must answer once let go, and its bytes if any object
		// must be stored then.
		run func(t *testing.T, w world) (firstAnswer int64, stored []byte)
	}{
		{"before the default 30 s a second put answers 0 and stores nothing", Options{}, func(t *testing.T, w world) (int64, []byte) {
			time.Sleep(DefaultDiscardTimeout - time.Nanosecond)
			assert.Equal(t, []int64{0}, put(t, w.st.Client(), w.s, []string{"k"}, 1))
			_, stored := w.st.Object("k")
			assert.False(t, stored)
			return 0, bytes.Repeat([]byte{1}, slot)
		}},
		{"at the default 30 s a second put stores its own bytes", Options{}, func(t *testing.T, w world) (int64, []byte) {
			time.Sleep(DefaultDiscardTimeout)
			other := w.st.Client()
			assert.Equal(t, []int64{0}, put(t, other, w.s, []string{"k"}, 1))
			assert.Equal(t, []int32{1}, exist(t, other, "k"))
			assert.Equal(t, int64(2*slot), w.st.Used(), "the overtaken claim's bytes stay taken until its put ends")
			return int64(mooncakesdk.IllegalClient), bytes.Repeat([]byte{2}, slot)
		}},
		{"the timeout is an option (the master's put_start_discard_timeout_sec)", Options{DiscardTimeout: 2 * time.Second}, func(t *testing.T, w world) (int64, []byte) {
			time.Sleep(time.Second)
			assert.Equal(t, []int64{0}, put(t, w.st.Client(), w.s, []string{"k"}, 1))
			_, stored := w.st.Object("k")
			assert.False(t, stored, "1 s: still in flight")
			time.Sleep(time.Second)
			assert.Equal(t, []int64{0}, put(t, w.st.Client(), w.s, []string{"k"}, 1))
			return int64(mooncakesdk.IllegalClient), bytes.Repeat([]byte{2}, slot)
		}},
		{"a get of a stale claim still answers -703: only a put discards it", Options{}, func(t *testing.T, w world) (int64, []byte) {
			time.Sleep(time.Hour)
			assert.Equal(t, []int64{-703}, get(t, w.st.Client(), w.s, []string{"k"}, 2))
			assert.Equal(t, []int32{0}, exist(t, w.st.Client(), "k"))
			return 0, bytes.Repeat([]byte{1}, slot)
		}},
		{"overtaken by the same client: the first put's end answers 0", Options{}, func(t *testing.T, w world) (int64, []byte) {
			time.Sleep(DefaultDiscardTimeout)
			assert.Equal(t, []int64{0}, put(t, w.first, w.s, []string{"k"}, 1))
			return 0, bytes.Repeat([]byte{2}, slot)
		}},
		{"an overtaking put that finds no room still discards the claim", Options{Capacity: slot}, func(t *testing.T, w world) (int64, []byte) {
			time.Sleep(DefaultDiscardTimeout)
			assert.Equal(t, []int64{-200}, put(t, w.st.Client(), w.s, []string{"k"}, 1))
			return int64(mooncakesdk.ObjectNotFound), nil
		}},
		{"a seed discards a stale claim, not a young one", Options{}, func(t *testing.T, w world) (int64, []byte) {
			ok, err := w.st.Seed("k", []byte("young"))
			require.NoError(t, err)
			assert.False(t, ok)
			time.Sleep(DefaultDiscardTimeout)
			ok, err = w.st.Seed("k", []byte("seeded"))
			require.NoError(t, err)
			assert.True(t, ok)
			return int64(mooncakesdk.IllegalClient), []byte("seeded")
		}},
		{"a vanished overtaker leaves nothing for the first put's end", Options{}, func(t *testing.T, w world) (int64, []byte) {
			time.Sleep(DefaultDiscardTimeout)
			put(t, w.st.Client(), w.s, []string{"k"}, 1)
			require.Equal(t, 1, w.st.Vanish("k"))
			return int64(mooncakesdk.ObjectNotFound), nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := New(tc.opts)
				gate := NewGate()
				require.NoError(t, st.Script(Fault{Op: Put, Key: "k", Hold: gate, Times: 1}))
				w := world{st: st, first: st.Client(), s: newSlab(t, 3, slot), started: time.Now()}
				w.s.fill(0, 1)
				w.s.fill(1, 2)
				done := make(chan []int64)
				go func() { done <- put(t, w.first, w.s, []string{"k"}, 0) }()
				<-gate.Reached()

				wantFirst, wantStored := tc.run(t, w)

				gate.Open()
				assert.Equal(t, []int64{wantFirst}, <-done, "the first put's answer")
				obj, stored := st.Object("k")
				if wantStored == nil {
					assert.False(t, stored, "nothing stored")
					assert.Zero(t, st.Used(), "every claim given back")
					return
				}
				require.True(t, stored)
				assert.Equal(t, wantStored, obj)
				assert.Equal(t, int64(len(wantStored)), st.Used(), "only the stored object's bytes are taken")
			})
		})
	}
}
