package engineguide_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

// guide:mooncake
// lendToMooncake opens a driver over a new client of the Mooncake pool
// that storeTOML describes, and lends staging memory to a backend over
// it with the file's [blob] settings (a file without key_prefix gets the
// default, "kvshare"). An engine with a config system of its own builds
// a mooncakesdk.StoreConfig there and calls mooncakedrv.OpenConfig.
func lendToMooncake(ctx context.Context, storeTOML string, slots int, slotBytes int64) (*lender, error) {
	driver, blob, err := mooncakedrv.Open(ctx, storeTOML, slog.Default())
	if err != nil {
		return nil, err // names the file, section and key; the variable; the library; or the master
	}
	return lend(ctx, driver, binding.FromBlob(blob), slots, slotBytes) // the backend owns the driver
}

// guide:end

// Without the library, lendToMooncake fails before anything is lent,
// naming the library it looked for.
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
	l, err := lendToMooncake(context.Background(), store, 4, 4096)
	assert.Nil(t, l)
	require.Error(t, err)
	assert.Contains(t, err.Error(), lib)
}

// The same code over the Mooncake driver, on fakesdk's in-memory
// Mooncake store (what mooncakedrv's own tests use): a publish and a
// fetch between two clients of one pool.
func Example_mooncakeDriver() {
	pool := fakesdk.New(fakesdk.Options{})
	quiet := slog.New(slog.DiscardHandler)
	open := func() *lender {
		driver, err := mooncakedrv.New(pool.Client(), mooncakedrv.Config{Logger: quiet})
		if err != nil {
			panic(err)
		}
		l, err := lend(context.Background(), driver, binding.Config{KeyPrefix: "engine", Logger: quiet}, 8, 4096)
		if err != nil {
			panic(err)
		}
		return l
	}
	publisher, fetcher := open(), open()
	view := requestView(blockHashes(make([]int32, 64), 16), 2, 4)
	a, err := publish(publisher.backend, view)
	if err != nil {
		panic(err)
	}
	<-a.Done()
	a, err = fetcher.backend.Fetch(view, nil)
	if err != nil {
		panic(err)
	}
	<-a.Done()
	out, _ := a.Outcome()
	fmt.Println("resume at block", view.ResumeBound(out))
	fmt.Println(publisher.close(context.Background()), fetcher.close(context.Background()))
	fmt.Println("clients destroyed:", pool.Calls().Destroy)
	// Output:
	// resume at block 4
	// <nil> <nil>
	// clients destroyed: 2
}

var _ contract.Driver = (*mooncakedrv.Driver)(nil)
