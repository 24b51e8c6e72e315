package gpuroundtrip

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/mooncakedrv/pool/pooltest"
	"github.com/stretchr/testify/require"
)

// The real-pool variants: the round trip through a real Mooncake pool
// (mooncakedrv/pool on loopback), each lender a client of its own. Off
// (one skip line) unless KVSHARE_MOONCAKE_DIR names a Mooncake folder.

// realPool starts a pool for t with a segment of segment bytes and
// returns the store config of its clients: TCP on loopback, no segment
// of the client's own, so every byte crosses to the pool's provider.
func realPool(t *testing.T, segment int64) Store {
	t.Helper()
	dir := pooltest.Dir(t)
	sum, err := pool.LibrarySHA256(dir)
	require.NoError(t, err)
	opts := pool.ForTests(dir)
	opts.SegmentSize = segment
	p := pooltest.Start(t, opts)
	for _, kv := range p.ClientEnv() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	path := filepath.Join(t.TempDir(), "store.toml")
	toml := fmt.Sprintf(`[blob]
key_prefix = "kvshare-gpuroundtrip"

[mooncake]
library = %s
sdk_sha256 = [%s]
master = %s
metadata_server = %s
protocol = "tcp"
local_hostname = "127.0.0.1"
global_segment_size = 0
local_buffer_size = %d
`, strconv.Quote(filepath.Join(dir, pool.Library)), strconv.Quote(sum),
		strconv.Quote(p.MasterAddress()), strconv.Quote(p.MetadataURL()), 64<<20)
	require.NoError(t, os.WriteFile(path, []byte(toml), 0o644))
	return MooncakeStore(path, slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// The round trip over the host stand-in and a real pool.
func TestRoundTripOverARealPool(t *testing.T) {
	store := realPool(t, 256<<20)
	cfg := smallConfig()
	cfg.BlockBytes = 64 << 10
	cfg.Store = store
	rep, err := Run(t.Context(), cfg, nil)
	require.NoError(t, err)
	logReport(t, rep)
	require.True(t, rep.OK(), fmt.Sprintf("%+v", rep))
}

// The round trip over real device memory and a real pool: both tiers on.
func TestCUDARoundTripOverARealPool(t *testing.T) {
	dev := tierGPU(t)
	_ = dev.Close() // Run opens its own
	cfg := cudaConfig()
	cfg.Blocks = 64 // 256 MiB each way
	cfg.Store = realPool(t, 1<<30)
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	rep, err := Run(t.Context(), cfg, nil)
	require.NoError(t, err)
	logReport(t, rep)
	require.True(t, rep.OnGPU)
	require.True(t, rep.OK(), fmt.Sprintf("%+v", rep))
}
