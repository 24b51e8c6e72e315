package mooncakedrv

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

// lookup asks the rig's driver about names.
func (r *rig) lookup(ctx context.Context, names ...string) ([]contract.Presence, error) {
	b := contract.LookupBatch{Keys: r.stem}
	for _, n := range names {
		b.Names = append(b.Names, []byte(n))
	}
	return r.drv.Lookup(ctx, b, nil)
}

func TestLookupPresentAndAbsent(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{})
	r.mem.fill(0, 1)
	st := r.put([]string{"stored"}, 0)
	require.Equal(t, contract.Ready, st.Rows[0])
	got, err := r.lookup(t.Context(), "stored", "absent", "stored-too")
	require.NoError(t, err)
	assert.Equal(t, []contract.Presence{contract.Present, contract.Absent, contract.Absent}, got)
	s := r.drv.Stats()
	assert.EqualValues(t, 1, s.Lookups)
	assert.EqualValues(t, 3, s.LookupNames)
	assert.Zero(t, s.LookupsInStore)
	r.close()
}

// A key a put of this driver is writing is InFlight, without asking the
// store; never Present before the put is Ready.
func TestLookupOfAKeyThisDriverIsPutting(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{})
	gate := fakesdk.NewGate()
	require.NoError(t, r.store.Script(fakesdk.Fault{Op: fakesdk.Put, Key: r.key("writing"), Hold: gate}))
	f, ch := notify()
	op, err := r.drv.Put(r.batch([]string{"writing"}, 0), f)
	require.NoError(t, err)
	<-gate.Reached()
	calls := r.store.Calls().Exist
	got, err := r.lookup(t.Context(), "writing")
	require.NoError(t, err)
	assert.Equal(t, []contract.Presence{contract.InFlight}, got)
	assert.Equal(t, calls, r.store.Calls().Exist, "no call to the store")
	gate.Open()
	settle(t, op, ch)
	got, err = r.lookup(t.Context(), "writing")
	require.NoError(t, err)
	assert.Equal(t, []contract.Presence{contract.Present}, got)
	r.close()
}

// A lookup held inside the store answers Unknown once its context ends,
// and the abandoned call keeps Drain false and Close refused until it
// ends; beyond the bound, lookups answer Unknown at once.
func TestLookupAbandonedAtItsDeadline(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{})
	gate := fakesdk.NewGate()
	require.NoError(t, r.store.Script(fakesdk.Fault{Op: fakesdk.Exist, Hold: gate}))
	// An input: the context must end while the gate holds the call.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	got, err := r.lookup(ctx, "held", "held-too")
	require.NoError(t, err)
	assert.Equal(t, []contract.Presence{contract.Unknown, contract.Unknown}, got)
	s := r.drv.Stats()
	assert.EqualValues(t, 1, s.LookupsAbandoned)
	assert.EqualValues(t, 1, s.LookupsInStore)

	for range MaxLookupsInStore - 1 { // fill the bound with more held lookups
		c, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := r.lookup(c, "held")
		require.NoError(t, err)
	}
	eventually(t, func() bool { return r.store.Calls().Exist == MaxLookupsInStore }, "every held lookup reaching the store")
	calls := r.store.Calls().Exist
	got, err = r.lookup(t.Context(), "beyond")
	require.NoError(t, err)
	assert.Equal(t, []contract.Presence{contract.Unknown}, got, "answered at once, no call")
	assert.Equal(t, calls, r.store.Calls().Exist)
	assert.EqualValues(t, 1, r.drv.Stats().LookupsRefused)
	assert.EqualValues(t, MaxLookupsInStore, r.drv.Stats().LookupsInStore)

	require.NoError(t, r.drv.Unregister(r.reg))
	short, cancel2 := context.WithTimeout(t.Context(), 20*time.Millisecond) // an input: Drain must give up
	defer cancel2()
	assert.False(t, r.drv.Drain(short), "lookups inside the store: not drained")
	assert.ErrorIs(t, r.drv.Close(), contract.ErrDriverRejected, "no call may run on a destroyed client")
	_, err = r.lookup(t.Context(), "after-drain")
	assert.ErrorIs(t, err, contract.ErrDriverRejected, "a lookup after Drain is refused")

	gate.Open()
	assert.True(t, r.drv.Drain(t.Context()), "the abandoned calls ended")
	require.NoError(t, r.drv.Close())
}

func TestLookupRefusals(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{})
	for name, b := range map[string]contract.LookupBatch{
		"no key maker":  {Names: [][]byte{[]byte("a")}},
		"an empty name": {Keys: r.stem, Names: [][]byte{[]byte("a"), {}}},
		"a name twice":  {Keys: r.stem, Names: [][]byte{[]byte("a"), []byte("b"), []byte("a")}},
	} {
		_, err := r.drv.Lookup(t.Context(), b, nil)
		assert.ErrorIs(t, err, contract.ErrDriverRejected, name)
	}
	assert.Zero(t, r.store.Calls().Exist, "nothing asked of the store")
	r.close()
}
