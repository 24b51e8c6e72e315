// Package realpool writes, for the real-pool tests of the tools module, the
// store config a user would write for a pool (package poolconfig): a client that mounts no
// segment (every byte crosses TCP to the pool's segment provider), the
// folder's library pinned by its SHA-256.
package realpool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/tools/internal/poolconfig"
)

// LocalBufferSize is the client's local buffer in the config written.
const LocalBufferSize = poolconfig.LocalBufferSize

// StoreConfig writes store.toml for pool p, started from the Mooncake
// folder dir, into a temporary folder of t and returns its path: see
// poolconfig.Text. It also sets the client environment the pool asks for
// (MC_TCP_BIND_ADDRESS) with t.Setenv, so the test cannot run in
// parallel.
func StoreConfig(t testing.TB, dir string, p *pool.Pool) string {
	t.Helper()
	text, err := poolconfig.Text(dir, p, "kvshare-test")
	if err != nil {
		t.Fatalf("%v", err)
	}
	for _, kv := range p.ClientEnv() {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	path := filepath.Join(t.TempDir(), "store.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
	return path
}
