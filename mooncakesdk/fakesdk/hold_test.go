package fakesdk

import (
	"bytes"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHoldKeys: a call carrying a key HoldKeys named waits at its gate,
// before the store looks at it, with every key of the call; a call of
// other keys, or of another op, passes; once the gate opens the held call
// runs as any call does.
func TestHoldKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, s := faultWorld(t, Options{}, 4)
		c := st.Client()
		gate, err := st.HoldKeys(Get, "old")
		require.NoError(t, err)

		done := make(chan []int64, 1)
		go func() { done <- get(t, c, s, []string{"missing", "old"}, 1, 2) }()
		<-gate.Reached()
		synctest.Wait()
		select {
		case res := <-done:
			t.Fatalf("the held get answered %v before its gate opened", res)
		default:
		}
		assert.True(t, gate.Holding("old"), "the key it was set for")
		assert.True(t, gate.Holding("missing"), "the held call carries it too")
		assert.False(t, gate.Holding("other"))
		assert.Equal(t, 0, st.Calls().Get, "not counted until it runs")

		assert.Equal(t, []int64{-704}, get(t, c, s, []string{"missing"}, 3), "a get of other keys passes")
		assert.Equal(t, []int64{0}, put(t, c, s, []string{"old"}, 0), "so does a put of the key")

		gate.Open()
		assert.Equal(t, []int64{-704, slot}, <-done)
		assert.Equal(t, bytes.Repeat([]byte{0x0D}, slot), s.slot(2))
		assert.False(t, gate.Holding("old"), "nothing waits at it any more")
		assert.Equal(t, []int64{slot}, get(t, c, s, []string{"old"}, 3), "an open gate holds nothing")
	})
}

// TestHoldKeysComesBeforeFaults: a held call is struck by the faults
// scripted while it waits, as it reaches the store only once the gate
// opens: a panic scripted before the data still strikes after the hold.
func TestHoldKeysComesBeforeFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, s := faultWorld(t, Options{}, 2)
		c := st.Client()
		gate, err := st.HoldKeys(Put, "new")
		require.NoError(t, err)
		require.NoError(t, st.Script(Fault{Op: Put, Panic: true}))

		panicked := make(chan any, 1)
		go func() {
			defer func() { panicked <- recover() }()
			put(t, c, s, []string{"new"}, 0)
		}()
		<-gate.Reached()
		synctest.Wait()
		select {
		case p := <-panicked:
			t.Fatalf("the held put ended (%v) before its gate opened", p)
		default:
		}
		gate.Open()
		assert.NotNil(t, <-panicked, "the scripted panic struck once the call reached the store")
		assert.Equal(t, []int32{0}, exist(t, c, "new"), "nothing stored")
	})
}

// TestHoldKeysAtSeveralGates: a call carrying the keys of two gates
// reaches both, and waits until both are open.
func TestHoldKeysAtSeveralGates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, s := faultWorld(t, Options{}, 3)
		c := st.Client()
		first, err := st.HoldKeys(Get, "old")
		require.NoError(t, err)
		second, err := st.HoldKeys(Get, "missing")
		require.NoError(t, err)

		done := make(chan []int64, 1)
		go func() { done <- get(t, c, s, []string{"old", "missing"}, 1, 2) }()
		<-first.Reached()
		<-second.Reached()
		first.Open()
		synctest.Wait()
		select {
		case res := <-done:
			t.Fatalf("the get answered %v with one of its gates closed", res)
		default:
		}
		assert.True(t, second.Holding("old"))
		second.Open()
		assert.Equal(t, []int64{slot, -704}, <-done)
	})
}

func TestHoldKeysRefuses(t *testing.T) {
	st := New(Options{})
	for _, op := range []Op{Register, Unregister, Health, Remove} {
		_, err := st.HoldKeys(op, "k")
		assert.ErrorIs(t, err, ErrScript, "%v", op)
	}
	_, err := st.HoldKeys(Get)
	assert.ErrorIs(t, err, ErrScript, "no keys")
}
