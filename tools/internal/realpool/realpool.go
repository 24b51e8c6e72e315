// Package realpool writes, for the real-pool tests of package tools, the
// store config a user would write for a pool: a client that mounts no
// segment (every byte crosses TCP to the pool's segment provider), the
// folder's library pinned by its SHA-256.
package realpool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvshare/kvshare/mooncakedrv/pool"
)

// LocalBufferSize is the client's local buffer in the config written.
const LocalBufferSize = 64 << 20

// StoreConfig writes store.toml for pool p, started from the Mooncake
// folder dir, into a temporary folder of t and returns its path: [blob]
// key_prefix "kvshare-test", [mooncake] library dir/lib/…, sdk_sha256
// its hash, the pool's master and metadata server, protocol tcp, local
// hostname 127.0.0.1, global segment 0, a 64 MiB local buffer. It also
// sets the client environment the pool asks for (MC_TCP_BIND_ADDRESS)
// with t.Setenv, so the test cannot run in parallel.
func StoreConfig(t testing.TB, dir string, p *pool.Pool) string {
	t.Helper()
	sum, err := pool.LibrarySHA256(dir)
	if err != nil {
		t.Fatalf("hashing the library: %v", err)
	}
	for _, kv := range p.ClientEnv() {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	text := fmt.Sprintf(`[blob]
key_prefix = "kvshare-test"

[mooncake]
library = %q
sdk_sha256 = [%q]
master = %q
metadata_server = %q
protocol = "tcp"
local_hostname = "127.0.0.1"
global_segment_size = 0
local_buffer_size = %d
`, filepath.Join(dir, pool.Library), sum, p.MasterAddress(), p.MetadataURL(), LocalBufferSize)
	path := filepath.Join(t.TempDir(), "store.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
	return path
}
