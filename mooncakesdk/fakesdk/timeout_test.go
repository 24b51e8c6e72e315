package fakesdk

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStuckTransferAnswersAfterTheTransferTimeout: a Running fault's
// call answers -800 after 30 s over TCP (MC_TCP_STATUS_TIMEOUT_SEC), 60 s
// over RDMA (the fixed cap), or the option's timeout; on synctest's
// clock, so the durations are exact.
func TestStuckTransferAnswersAfterTheTransferTimeout(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		op   Op
		key  string
		want time.Duration
	}{
		{"get over TCP", Options{}, Get, "old", 30 * time.Second},
		{"put over TCP", Options{}, Put, "new", 30 * time.Second},
		{"get over RDMA", Options{RDMA: true}, Get, "old", 60 * time.Second},
		{"put with the option", Options{TransferTimeout: 5 * time.Second}, Put, "new", 5 * time.Second},
		{"get with no wait", Options{TransferTimeout: -1}, Get, "old", 0},
		{"a key the store would not serve does not wait", Options{}, Get, "missing", 0},
		{"latency comes on top", Options{Latency: time.Millisecond}, Get, "old", 30*time.Second + time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st, s := faultWorld(t, tc.opts, 2)
				c := st.Client()
				require.NoError(t, c.RegisterBuffer(s.addr(0), 2*slot))
				running := NewGate()
				require.NoError(t, st.Script(Fault{Op: tc.op, Key: tc.key, Code: mooncakesdk.TransferFail, Running: running}))
				res := make([]int64, 1)
				start := time.Now()
				if tc.op == Put {
					require.NoError(t, c.BatchPutFrom([]string{tc.key}, s.addrs(0), s.sizes(1), res))
				} else {
					require.NoError(t, c.BatchGetInto([]string{tc.key}, s.addrs(1), s.sizes(1), res))
				}
				assert.Equal(t, []int64{-800}, res)
				assert.Equal(t, tc.want, time.Since(start))
				running.Open()
				running.Wait()
			})
		})
	}
}

// TestPutIsInFlightWhileItsTransferIsStuck: until the timeout answers
// the put, its key is in flight: a get answers -703, a second put 0.
func TestPutIsInFlightWhileItsTransferIsStuck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, s := faultWorld(t, Options{}, 2)
		running := NewGate()
		require.NoError(t, st.Script(Fault{Op: Put, Key: "new", Code: mooncakesdk.TransferFail, Running: running, Times: 1}))
		done := make(chan []int64)
		go func() { done <- put(t, st.Client(), s, []string{"new"}, 0) }()
		time.Sleep(29 * time.Second)
		synctest.Wait()

		other := st.Client()
		assert.Equal(t, []int64{-703}, get(t, other, s, []string{"new"}, 1))
		assert.Equal(t, []int64{0}, put(t, other, s, []string{"new"}, 1), "in flight: a second put answers 0")
		assert.Equal(t, []int64{-800}, <-done)
		assert.Equal(t, []int32{0}, exist(t, other, "new"), "revoked: nothing stored")
		running.Open()
		running.Wait()
	})
}
