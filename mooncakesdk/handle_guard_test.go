package mooncakesdk

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHandleGuardAdmitsCallsUntilClosed(t *testing.T) {
	var g HandleGuard // the zero guard is open
	require.NoError(t, g.Enter())
	require.NoError(t, g.Enter(), "calls enter concurrently")
	g.Leave()
	g.Leave()

	destroyed := 0
	require.NoError(t, g.Close(func() { destroyed++ }))
	assert.ErrorIs(t, g.Enter(), ErrClosed)
	assert.ErrorIs(t, g.Close(func() { destroyed++ }), ErrClosed)
	assert.Equal(t, 1, destroyed, "destroy runs once")
	assert.NoError(t, new(HandleGuard).Close(nil), "no destroy to run")
}

// TestHandleGuardCloseWaitsForCalls: destroy runs only after every call
// inside has left. (A mutex wait is not durable for testing/synctest, so
// the test gives Close a moment to reach the lock; a broken guard would
// run destroy with the call inside, whatever the timing, in that moment.)
func TestHandleGuardCloseWaitsForCalls(t *testing.T) {
	var g HandleGuard
	var inside atomic.Int32
	require.NoError(t, g.Enter())
	inside.Add(1)

	closed := make(chan int32)
	go func() {
		var seen int32 = -1
		assert.NoError(t, g.Close(func() { seen = inside.Load() }))
		closed <- seen
	}()
	time.Sleep(20 * time.Millisecond)
	select {
	case <-closed:
		t.Fatal("Close returned while a call was inside")
	default:
	}

	inside.Add(-1)
	g.Leave()
	assert.Equal(t, int32(0), <-closed, "destroy ran with no call inside")
	assert.ErrorIs(t, g.Enter(), ErrClosed)
}
