package fakesdk

import (
	"bytes"
	"testing"
	"time"

	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keyList packs keys the way a driver does: appended to the tail, added.
func keyList(t *testing.T, keys ...string) *mooncakesdk.KeyList {
	t.Helper()
	l := new(mooncakesdk.KeyList)
	for _, k := range keys {
		require.NoError(t, l.Add(append(l.Tail(), k...)))
	}
	return l
}

// TestListCallsAnswerAsTheStringCalls: the KeyList calls are the same
// calls: same answers, same bytes moved, same refusals.
func TestListCallsAnswerAsTheStringCalls(t *testing.T) {
	st, s := faultWorld(t, Options{}, 4)
	c := st.Client()
	s.fill(0, 0xA1)

	res := make([]int64, 3)
	require.NoError(t, c.BatchPutFromList(keyList(t, "new", "old", "new"), s.addrs(0, 0, 0), s.sizes(3), res))
	assert.Equal(t, []int64{0, 0, 0}, res)
	obj, _ := st.Object("new")
	assert.Equal(t, s.slot(0), obj)

	require.NoError(t, c.BatchGetIntoList(keyList(t, "old", "missing", "new"), s.addrs(1, 2, 3), s.sizes(3), res))
	assert.Equal(t, []int64{slot, -704, slot}, res)
	assert.Equal(t, bytes.Repeat([]byte{0x0D}, slot), s.slot(1))
	assert.Equal(t, bytes.Repeat([]byte{0xEE}, slot), s.slot(2))
	assert.Equal(t, s.slot(0), s.slot(3))

	ex := make([]int32, 3)
	require.NoError(t, c.BatchIsExistList(keyList(t, "old", "missing", "new"), ex))
	assert.Equal(t, []int32{1, 0, 1}, ex)

	assert.Equal(t, Calls{Put: 1, Get: 1, Exist: 1}, st.Calls())
}

func TestListCallsRefuseAndReachNothing(t *testing.T) {
	st := New(Options{})
	c := st.Client()
	l := keyList(t, "a", "b")
	for name, call := range map[string]func() error{
		"put: lengths differ":  func() error { return c.BatchPutFromList(l, []uintptr{1}, []uint64{1, 1}, make([]int64, 2)) },
		"get: address 0":       func() error { return c.BatchGetIntoList(l, []uintptr{1, 0}, []uint64{1, 1}, make([]int64, 2)) },
		"exist: results short": func() error { return c.BatchIsExistList(l, make([]int32, 1)) },
	} {
		assert.ErrorIs(t, call(), mooncakesdk.ErrInvalidArgument, name)
	}
	assert.NoError(t, c.BatchPutFromList(new(mooncakesdk.KeyList), nil, nil, nil))
	assert.NoError(t, c.BatchGetIntoList(nil, nil, nil, nil))
	assert.NoError(t, c.BatchIsExistList(nil, nil))
	assert.Equal(t, Calls{}, st.Calls())

	require.NoError(t, c.Destroy())
	assert.ErrorIs(t, c.BatchIsExistList(l, make([]int32, 2)), mooncakesdk.ErrClosed)
	assert.ErrorIs(t, c.BatchPutFromList(l, []uintptr{1, 1}, []uint64{1, 1}, make([]int64, 2)), mooncakesdk.ErrClosed)
	assert.ErrorIs(t, c.BatchGetIntoList(l, []uintptr{1, 1}, []uint64{1, 1}, make([]int64, 2)), mooncakesdk.ErrClosed)
}

// TestDestroyWaitsForACallInProgress: the fake's client shares the real
// one's call guard: Destroy waits for a held call, and counts only once
// it ran. (A mutex wait is not durable for synctest: the test gives
// Destroy a moment to reach the guard.)
func TestDestroyWaitsForACallInProgress(t *testing.T) {
	st, s := faultWorld(t, Options{}, 2)
	c := st.Client()
	gate := NewGate()
	require.NoError(t, st.Script(Fault{Op: Get, Hold: gate, Times: 1}))
	got := make(chan []int64)
	go func() { got <- get(t, c, s, []string{"old"}, 1) }()
	<-gate.Reached()

	destroyed := make(chan error)
	go func() { destroyed <- c.Destroy() }()
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-destroyed:
		t.Fatalf("Destroy returned (%v) while a call was held", err)
	default:
	}
	assert.Zero(t, st.Calls().Destroy)

	gate.Open()
	assert.Equal(t, []int64{slot}, <-got)
	require.NoError(t, <-destroyed)
	assert.Equal(t, 1, st.Calls().Destroy)
	assert.ErrorIs(t, c.HealthCheck(), mooncakesdk.ErrClosed)
}
