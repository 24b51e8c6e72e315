package mooncakedrv

import (
	"log/slog"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

// Every verdict the Mooncake driver gives reaches the outcome's rows, in
// view order, through binding.Open over the fake SDK.
func TestEveryStatusReachesTheOutcomeOverTheFake(t *testing.T) {
	const rows = 6
	store := fakesdk.New(fakesdk.Options{Capacity: 3 * slotBytes})
	// One worker, a call a part: the rows after the faulted one wait in
	// its queue, so the fetch's stop cancels them before they run.
	d, err := New(store.Client(), Config{Workers: 1, CallPerPart: true, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	mem := newMemory(t, rows, slotBytes)
	h := &hold{}
	// One row a driver call, so a Fault stops the fetch's later calls.
	be, err := binding.Open(t.Context(), binding.Loan{Regions: []contract.SlotRegion{mem.region}, Hold: h}, d,
		binding.Config{KeyPrefix: "statuses", MaxRowsPerCall: 1, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	stem, err := keys.NewStem("statuses")
	require.NoError(t, err)
	key := func(name string) string {
		k, err := stem.Key([]byte(name))
		require.NoError(t, err)
		return k
	}
	view := func(names ...string) contract.View {
		g := contract.Group{}
		for i, n := range names {
			g.Slots = append(g.Slots, int32(i))
			g.Names = append(g.Names, []byte(n))
		}
		return contract.View{Groups: []contract.Group{g}}
	}

	for i := range rows {
		mem.fill(i, byte(i+1))
	}
	object := make([]byte, slotBytes)
	for _, n := range []string{"ready", "fault"} {
		ok, err := store.Seed(key(n), object)
		require.NoError(t, err)
		require.True(t, ok)
	}
	gate := fakesdk.NewGate()
	require.NoError(t, store.Script(
		fakesdk.Fault{Op: fakesdk.Get, Key: key("not-ready"), Code: -703},
		fakesdk.Fault{Op: fakesdk.Get, Key: key("fault"), Hold: gate},
		fakesdk.Fault{Op: fakesdk.Get, Key: key("fault"), Code: -900},
	))
	a, err := be.Fetch(view("ready", "miss", "not-ready", "fault", "later-1", "later-2"), nil)
	require.NoError(t, err)
	<-gate.Reached()
	gate.Open()
	out, err := a.Wait(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Miss, contract.NotReady, contract.Fault, contract.Cancelled, contract.Cancelled}, out.Rows)
	assert.ErrorIs(t, out.Fault, binding.ErrRowFault)
	<-a.Done()

	// The pool holds three slots: two seeded, one more put fits.
	p, err := be.Publish(view("stored", "full"), nil)
	require.NoError(t, err)
	out, err = p.Wait(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Declined}, out.Rows)
	<-p.Done()

	require.NoError(t, be.Close(t.Context()))
	assert.EqualValues(t, 1, h.n.Load())
	assert.Equal(t, 1, store.Calls().Destroy, "Close closed the driver, which destroyed its client")
}

// OpenConfig refuses a config it cannot open, naming what was wrong,
// before anything is loaded: a value out of range, a library missing.
func TestOpenConfigNamesWhatIsWrong(t *testing.T) {
	for _, v := range []string{"MC_STORE_LOCAL_HOT_CACHE_SIZE", "MC_TCP_PROTO", "MC_USE_TENT", "MC_USE_TEV1"} {
		t.Setenv(v, "") // restored after the test
		require.NoError(t, os.Unsetenv(v))
	}
	sc, err := mooncakesdk.ParseStoreConfig("engine.toml", []byte(`[mooncake]
master = "127.0.0.1:25151"
metadata_server = "P2PHANDSHAKE"
local_hostname = "127.0.0.1"
library = "/nonexistent/libmooncake_store.so"
`))
	require.NoError(t, err)
	assert.Empty(t, sc.Blob.KeyPrefix, "a file without key_prefix opens: the backend's default applies")
	assert.Equal(t, "kvshare", binding.FromBlob(sc.Blob).KeyPrefix)

	bad := sc
	bad.Mooncake.Workers = -1
	_, err = OpenConfig(t.Context(), bad, slog.New(slog.DiscardHandler))
	require.ErrorIs(t, err, mooncakesdk.ErrConfig)
	assert.ErrorContains(t, err, "[mooncake] workers")

	_, err = OpenConfig(t.Context(), sc, slog.New(slog.DiscardHandler))
	require.ErrorIs(t, err, mooncakesdk.ErrLibrary)
	assert.ErrorContains(t, err, "/nonexistent/libmooncake_store.so")
}
