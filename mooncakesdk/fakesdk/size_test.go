package fakesdk

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// sizeCode is the code of GetSize's *CallError, 0 for none, and the
// size answered.
func sizeCode(t *testing.T, c *Client, key string) (int64, mooncakesdk.Code) {
	t.Helper()
	n, err := c.GetSize(key)
	if err == nil {
		return n, 0
	}
	var ce *mooncakesdk.CallError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "mooncake_store_get_size", ce.Func)
	assert.Zero(t, n, "no size with an error")
	return n, ce.Code
}

// TestGetSize: a complete object answers its size; a key a put has
// claimed and not finished REPLICA_IS_NOT_READY, as a get finds it; an
// absent or vanished key OBJECT_NOT_FOUND. Only a well-formed call on a
// live client is counted.
func TestGetSize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, s := faultWorld(t, Options{}, 2)
		c := st.Client()
		var sizer mooncakesdk.Sizer = c

		n, err := sizer.GetSize("old")
		require.NoError(t, err)
		assert.EqualValues(t, slot, n)
		_, code := sizeCode(t, c, "missing")
		assert.Equal(t, mooncakesdk.ObjectNotFound, code)

		// A put held after it claimed its key: in flight.
		gate := NewGate()
		require.NoError(t, st.Script(Fault{Op: Put, Key: "new", Hold: gate, Times: 1}))
		done := make(chan []int64, 1)
		go func() { done <- put(t, st.Client(), s, []string{"new"}, 0) }()
		<-gate.Reached()
		_, code = sizeCode(t, c, "new")
		assert.Equal(t, mooncakesdk.ReplicaIsNotReady, code, "a put of it is in flight")
		assert.Equal(t, []int32{0}, exist(t, c, "new"), "which is-exist cannot tell from absent")
		gate.Open()
		assert.Equal(t, []int64{0}, <-done)
		n, code = sizeCode(t, c, "new")
		assert.Zero(t, code, "the put landed")
		assert.EqualValues(t, slot, n)

		st.Vanish("old")
		_, code = sizeCode(t, c, "old")
		assert.Equal(t, mooncakesdk.ObjectNotFound, code, "vanished")
		assert.Equal(t, 5, st.Calls().Size)

		_, err = c.GetSize("")
		assert.ErrorIs(t, err, mooncakesdk.ErrInvalidArgument)
		_, err = c.GetSize("a\x00b")
		assert.ErrorIs(t, err, mooncakesdk.ErrInvalidArgument, "a NUL in the key")
		require.NoError(t, c.Destroy())
		_, err = c.GetSize("new")
		assert.ErrorIs(t, err, mooncakesdk.ErrClosed)
		assert.Equal(t, 5, st.Calls().Size, "neither reached the store")
	})
}

// TestGetSizeFaults: a fault on Size strikes GetSize as one on Remove
// strikes Remove: a Code is the function's answer, Fail the library's
// -1, Panic a panic, Hold a wait at the gate; each its Times calls.
func TestGetSizeFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, _ := faultWorld(t, Options{}, 1)
		c := st.Client()
		require.NoError(t, st.Script(Fault{Op: Size, Code: mooncakesdk.RPCFail, Times: 1}))
		_, code := sizeCode(t, c, "old")
		assert.Equal(t, mooncakesdk.RPCFail, code, "the scripted answer")
		require.NoError(t, st.Script(Fault{Op: Size, Fail: true, Times: 1}))
		_, code = sizeCode(t, c, "old")
		assert.Equal(t, mooncakesdk.InternalError, code, "the whole call failed")
		n, code := sizeCode(t, c, "old")
		assert.Zero(t, code, "both faults spent")
		assert.EqualValues(t, slot, n)

		require.NoError(t, st.Script(Fault{Op: Size, Panic: true, Times: 1}))
		assert.Panics(t, func() { _, _ = c.GetSize("old") })

		gate := NewGate()
		require.NoError(t, st.Script(Fault{Op: Size, Hold: gate, Times: 1}))
		done := make(chan int64, 1)
		go func() {
			n, _ := c.GetSize("old")
			done <- n
		}()
		<-gate.Reached()
		synctest.Wait()
		select {
		case n := <-done:
			t.Fatalf("the held GetSize answered %d before its gate opened", n)
		default:
		}
		gate.Open()
		assert.EqualValues(t, slot, <-done)
		assert.Equal(t, 5, st.Calls().Size)
	})
}

// A Size fault has no Key to narrow it (one key a call, as Remove), and
// HoldKeys holds only data calls.
func TestSizeFaultsRefused(t *testing.T) {
	st := New(Options{})
	assert.ErrorIs(t, st.Script(Fault{Op: Size, Key: "k", Fail: true}), ErrScript)
	assert.ErrorIs(t, st.Script(Fault{Op: Size, Vanish: true}), ErrScript)
	_, err := st.HoldKeys(Size, "k")
	assert.ErrorIs(t, err, ErrScript)
	assert.ErrorIs(t, st.Script(Fault{Op: Size + 1, Fail: true}), ErrScript, "no op after Size")
	assert.Equal(t, "size", Size.String())
	assert.Equal(t, "mooncake_store_get_size", Size.cFunc())
}
