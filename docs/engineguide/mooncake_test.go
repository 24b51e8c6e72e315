package engineguide_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/lender"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
	"github.com/kvshare/kvshare/redisdrv"
)

// guide:mooncake
// lendToMooncake lends staging memory of geometry g to a backend over a
// new client of the Mooncake pool storeTOML describes, with the file's
// [blob] settings (without key_prefix: "kvshare"). The client is opened
// once the memory is mapped; on any failure nothing stays open or mapped.
func lendToMooncake(ctx context.Context, storeTOML string, g hostmem.Geometry) (*lender.Lender, error) {
	sc, err := mooncakesdk.LoadStoreConfig(storeTOML) // a refusal names the file, section and key
	if err != nil {
		return nil, err
	}
	open := func(ctx context.Context) (contract.Driver, error) {
		return mooncakedrv.OpenConfig(ctx, sc, slog.Default()) // names the variable, library or master that failed
	}
	return lender.Open(ctx, open, lender.Options{Geometry: g, Memory: hostmem.Options{Lock: true}, Backend: binding.FromBlob(sc.Blob)})
}

// guide:end

// guide:redis
// lendToRedis is lendToMooncake for a Redis server or cluster: the
// [redis] section of storeTOML says which, and how to reach it.
func lendToRedis(ctx context.Context, storeTOML string, g hostmem.Geometry) (*lender.Lender, error) {
	sc, err := redisdrv.LoadStoreConfig(storeTOML)
	if err != nil {
		return nil, err
	}
	open := func(ctx context.Context) (contract.Driver, error) {
		return redisdrv.OpenConfig(ctx, sc, slog.Default()) // names the address that did not answer
	}
	return lender.Open(ctx, open, lender.Options{Geometry: g, Memory: hostmem.Options{Lock: true}, Backend: binding.FromBlob(sc.Blob)})
}

// guide:end

var guideGeometry = hostmem.Geometry{SlotBytes: 4096, SlotCount: 4}

// Without the library, lendToMooncake fails before anything is lent,
// naming the library it looked for, and unmaps what it mapped.
func TestLendToMooncakeNamesAMissingLibrary(t *testing.T) {
	for _, v := range []string{"MC_STORE_LOCAL_HOT_CACHE_SIZE", "MC_TCP_PROTO", "MC_USE_TENT", "MC_USE_TEV1"} {
		t.Setenv(v, "") // restored after the test
		require.NoError(t, os.Unsetenv(v))
	}
	dir := t.TempDir()
	lib := filepath.Join(dir, "libmooncake_store.so")
	store := filepath.Join(dir, "store.toml")
	require.NoError(t, os.WriteFile(store, []byte(fmt.Sprintf(`[mooncake]
library = %q
master = "127.0.0.1:25151"
metadata_server = "P2PHANDSHAKE"
local_hostname = "127.0.0.1"
`, lib)), 0o644))
	before := hostmem.Totals().MappedNow
	l, err := lendToMooncake(context.Background(), store, guideGeometry)
	assert.Nil(t, l)
	require.Error(t, err)
	assert.Contains(t, err.Error(), lib)
	assert.Equal(t, before, hostmem.Totals().MappedNow)
}

// A Redis address nobody answers at: lendToRedis names it, and unmaps
// what it mapped.
func TestLendToRedisNamesTheAddressThatDidNotAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	store := filepath.Join(t.TempDir(), "store.toml")
	require.NoError(t, os.WriteFile(store, []byte(fmt.Sprintf("[blob]\nkey_prefix = \"engine\"\n\n[redis]\naddress = %q\n", addr)), 0o644))
	before := hostmem.Totals().MappedNow
	l, err := lendToRedis(context.Background(), store, guideGeometry)
	assert.Nil(t, l)
	require.Error(t, err)
	assert.Contains(t, err.Error(), addr)
	assert.Equal(t, before, hostmem.Totals().MappedNow)

	_, err = lendToRedis(context.Background(), filepath.Join(t.TempDir(), "missing.toml"), guideGeometry)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// A driver whose config New refuses leaves the client the caller's:
// the open function destroys it, and Open unmaps the memory.
func TestAClientNewRefusedIsDestroyed(t *testing.T) {
	pool := fakesdk.New(fakesdk.Options{})
	before := hostmem.Totals().MappedNow
	_, err := lender.Open(context.Background(), mooncakeOpener(pool, mooncakedrv.Config{Workers: -1}), lender.Options{Geometry: guideGeometry})
	require.ErrorIs(t, err, mooncakedrv.ErrConfig)
	assert.Equal(t, 1, int(pool.Calls().Destroy))
	assert.Equal(t, before, hostmem.Totals().MappedNow)
}

// mooncakeOpener opens a driver over a new client of a fakesdk pool, as
// an engine over its own Mooncake client does: mooncakedrv.New owns the
// client only once it succeeded.
func mooncakeOpener(pool *fakesdk.Store, cfg mooncakedrv.Config) func(context.Context) (contract.Driver, error) {
	return func(context.Context) (contract.Driver, error) {
		client := pool.Client()
		d, err := mooncakedrv.New(client, cfg)
		if err != nil {
			return nil, errors.Join(err, client.Destroy())
		}
		return d, nil
	}
}

// The same code over the Mooncake driver, on fakesdk's in-memory
// Mooncake store (what mooncakedrv's own tests use): a publish and a
// fetch between two clients of one pool.
func Example_mooncakeDriver() {
	ctx := context.Background()
	pool := fakesdk.New(fakesdk.Options{})
	quiet := slog.New(slog.DiscardHandler)
	open := func() *lender.Lender {
		l, err := lender.Open(ctx, mooncakeOpener(pool, mooncakedrv.Config{Logger: quiet}), lender.Options{
			Geometry: hostmem.Geometry{SlotBytes: 4096, SlotCount: 8},
			Backend:  binding.Config{KeyPrefix: "engine", Logger: quiet},
		})
		if err != nil {
			panic(err)
		}
		return l
	}
	publisher, fetcher := open(), open()
	view := requestView(blockHashes(make([]int32, 64), 16), 2, 4)
	a, err := publish(publisher.Backend, view)
	if err != nil {
		panic(err)
	}
	if _, err := contract.Settle(ctx, a); err != nil {
		panic(err)
	}
	a, err = fetcher.Fetch(view, nil)
	if err != nil {
		panic(err)
	}
	out, err := contract.Settle(ctx, a)
	if err != nil {
		panic(err)
	}
	fmt.Println("resume at block", view.ResumeBound(out))
	fmt.Println(publisher.Close(ctx), fetcher.Close(ctx))
	fmt.Println("clients destroyed:", pool.Calls().Destroy)
	// Output:
	// resume at block 4
	// <nil> <nil>
	// clients destroyed: 2
}

var _ contract.Driver = (*mooncakedrv.Driver)(nil)
