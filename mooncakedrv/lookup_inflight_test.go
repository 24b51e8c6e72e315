package mooncakedrv

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

// heldPut starts another client's put of key on the rig's store, held
// after it claimed the key (in flight: batch_is_exist answers 0,
// get_size -703), and returns what lets it land.
func (r *rig) heldPut(key string) (land func()) {
	r.t.Helper()
	gate := fakesdk.NewGate()
	require.NoError(r.t, r.store.Script(fakesdk.Fault{Op: fakesdk.Put, Key: key, Hold: gate, Times: 1}))
	buf := newGoBuffer(slotBytes)
	done := make(chan error, 1)
	go func() {
		done <- r.store.Client().BatchPutFrom([]string{key}, []uintptr{buf.addr()}, []uint64{slotBytes}, make([]int64, 1))
	}()
	<-gate.Reached()
	return func() {
		gate.Open()
		require.NoError(r.t, <-done)
		buf.free()
	}
}

// A key another client's put holds in flight is InFlight when it is the
// first of the call to answer 0 (asked once more with get_size, which
// answers -703); later zeros are Absent without a get_size, an in-flight
// key among them too (the driver does not declare LookupInFlight). Once
// the put lands the key is Present.
func TestLookupTellsAnotherWritersKeyInFlight(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{})
	assert.False(t, r.drv.Capabilities().LookupInFlight, "only the first zero is told apart")
	r.mem.fill(0, 1)
	require.Equal(t, contract.Ready, r.put([]string{"stored"}, 0).Rows[0])
	landFirst := r.heldPut(r.key("in-flight"))
	landSecond := r.heldPut(r.key("in-flight-too"))

	sizes := r.store.Calls().Size
	got, err := r.lookup(t.Context(), "stored", "in-flight", "absent", "in-flight-too")
	require.NoError(t, err)
	assert.Equal(t, []contract.Presence{contract.Present, contract.InFlight, contract.Absent, contract.Absent}, got)
	assert.Equal(t, sizes+1, r.store.Calls().Size, "one get_size: the first zero's")

	got, err = r.lookup(t.Context(), "absent", "in-flight")
	require.NoError(t, err)
	assert.Equal(t, []contract.Presence{contract.Absent, contract.Absent}, got, "the first zero is absent (-704); the in-flight key comes later")
	assert.Equal(t, sizes+2, r.store.Calls().Size)

	got, err = r.lookup(t.Context(), "stored")
	require.NoError(t, err)
	assert.Equal(t, []contract.Presence{contract.Present}, got)
	assert.Equal(t, sizes+2, r.store.Calls().Size, "no zero, no get_size")

	landFirst()
	landSecond()
	got, err = r.lookup(t.Context(), "in-flight", "in-flight-too")
	require.NoError(t, err)
	assert.Equal(t, []contract.Presence{contract.Present, contract.Present}, got, "landed: complete objects")
	r.close()
}

// A get_size that fails leaves batch_is_exist's 0 standing: the first
// zero reads Absent, never Present.
func TestLookupWhenGetSizeFails(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{})
	land := r.heldPut(r.key("in-flight"))
	require.NoError(t, r.store.Script(fakesdk.Fault{Op: fakesdk.Size, Code: mooncakesdk.RPCFail, Times: 1}))
	got, err := r.lookup(t.Context(), "in-flight", "absent")
	require.NoError(t, err)
	assert.Equal(t, []contract.Presence{contract.Absent, contract.Absent}, got)
	got, err = r.lookup(t.Context(), "in-flight")
	require.NoError(t, err)
	assert.Equal(t, []contract.Presence{contract.InFlight}, got, "the fault spent, get_size tells it again")
	land()
	r.close()
}
