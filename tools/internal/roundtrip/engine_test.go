package roundtrip

import (
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/node"
	"github.com/kvshare/kvshare/patience"
)

// startNode serves a node over an embedded store for one test (in this
// process: RunEngine only needs its socket) and shuts it down after,
// checking that it holds nothing.
func startNode(t *testing.T) (*memdrv.Store, string) {
	t.Helper()
	store, err := memdrv.NewBoundedStore(memdrv.StoreOptions{Capacity: 8 << 20})
	require.NoError(t, err)
	drv := memdrv.New(store, memdrv.Options{Workers: 2})
	dir := t.TempDir()
	socket := filepath.Join(dir, "node.sock")
	n, err := node.New(node.Config{Driver: drv, Socket: socket})
	require.NoError(t, err)
	l, err := node.Listen(socket, 0o600)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- n.Serve(ctx, l) }()
	t.Cleanup(func() {
		sctx, stop := context.WithTimeout(context.Background(), patience.Wait())
		defer stop()
		assert.Empty(t, n.Shutdown(sctx), "the node holds nothing at the end")
		cancel()
		<-served
		assert.True(t, drv.Drain(sctx))
		assert.NoError(t, drv.Close())
		assert.NoError(t, store.Close())
	})
	return store, socket
}

func engineConfig(socket string, role Role, rows int) EngineConfig {
	cfg := Defaults()
	cfg.Rows, cfg.RowBytes, cfg.ViewRows, cfg.Seed, cfg.Timeout = rows, 4096, 8, 7, patience.Wait()
	return EngineConfig{Socket: socket, Role: role, Config: cfg}
}

// The fetcher fetches only what its lookup found present (the publisher
// published the first half), checks every fetched byte, and a row
// whose stored bytes differ from what the seed makes is counted a mismatch.
func TestEngineFetchesWhatIsPresentAndChecksEveryByte(t *testing.T) {
	store, socket := startNode(t)
	pub, err := RunEngine(t.Context(), engineConfig(socket, Publisher, 16), 1)
	require.NoError(t, err)
	assert.Equal(t, 16, pub.Moved.Delivered)
	assert.Equal(t, int64(16), pub.Moved.Rows[contract.Ready])
	assert.True(t, pub.Returned)

	// Row 3's object, altered in the store: its fetch delivers it, the
	// byte check must not pass it.
	cfg := engineConfig(socket, Fetcher, 32).Config
	name := views(cfg)[0].Groups[0].Names[3]
	key := "kvshare/v1/" + hex.EncodeToString(name)
	obj, ok := store.Object(key)
	require.True(t, ok, "row 3 is stored under %s", key)
	bad := append([]byte(nil), obj...)
	bad[100] ^= 0xff
	store.Delete(key)
	store.Set(key, bad)

	fet, err := RunEngine(t.Context(), engineConfig(socket, Fetcher, 32), 2)
	require.NoError(t, err)
	assert.Equal(t, 32, fet.Lookup.Asked)
	assert.Equal(t, 16, fet.Lookup.Present, "the publisher's 16 rows, not the 16 after them")
	assert.Equal(t, 16, fet.Moved.Delivered, "only what is present is fetched")
	assert.Equal(t, 16, fet.Checked)
	assert.Equal(t, 1, fet.Mismatches, "row 3")
	assert.True(t, fet.Returned)
}

// A role that is neither publish nor fetch, and a config out of range,
// are refused before anything is dialled.
func TestEngineRefusesBadConfig(t *testing.T) {
	for name, e := range map[string]EngineConfig{
		"role": {Socket: "/nonexistent", Role: "lend", Config: Defaults()},
		"rows": {Socket: "/nonexistent", Role: Publisher, Config: Config{}},
	} {
		_, err := RunEngine(t.Context(), e, os.Getpid())
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), name)
	}
}
