package mooncakedrv

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

// Drain waits for the callback Cancel started, and returns true as soon
// as it returns: the last callback to end wakes Drain.
func TestDrainWaitsForTheCallbackOfACancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, fakesdk.Options{}, Config{Workers: 1, RowsPerCall: 1})
		gate := fakesdk.NewGate()
		script(r, fakesdk.Fault{Op: fakesdk.Put, Hold: gate, Times: 1})
		r.mem.fill(0, 1)
		r.mem.fill(1, 2)
		var armed atomic.Bool
		entered, let := make(chan struct{}), make(chan struct{})
		op, err := r.drv.Put(r.batch([]string{"a", "b"}, 0, 1), func() {
			if armed.CompareAndSwap(true, false) {
				close(entered)
				<-let
			}
		})
		require.NoError(t, err)
		<-gate.Reached() // the one worker is inside the SDK with "a"
		armed.Store(true)
		op.Cancel() // "b" ends Cancelled; its callback blocks
		<-entered
		gate.Open()
		synctest.Wait()
		require.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Ready, contract.Cancelled}, Access: contract.Ended},
			op.Poll(nil))

		drained := make(chan bool)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			drained <- r.drv.Drain(ctx)
		}()
		synctest.Wait() // Drain waits for the callback
		select {
		case <-drained:
			t.Fatal("Drain returned while a callback was being delivered")
		default:
		}
		close(let)
		assert.True(t, <-drained, "the callback's end woke Drain")
		require.NoError(t, r.drv.Unregister(r.reg))
		require.NoError(t, r.drv.Close())
	})
}
