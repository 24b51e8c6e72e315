package node

import (
	"testing"

	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/mooncakedrv/pool/pooltest"
)

// TestRealTwoEngineProcessesShareOnlyTheirScope runs the scope test on
// a real Mooncake pool (the real-pool tier: KVSHARE_MOONCAKE_DIR;
// unset, it skips): a node process, the pool's client over TCP, and two
// engine processes — the second finds and fetches the first's rows
// under the same scope, and nothing under two scopes that differ from
// it (and the others of the table), its slots untouched.
func TestRealTwoEngineProcessesShareOnlyTheirScope(t *testing.T) {
	dir := pooltest.Dir(t)
	p := pooltest.Start(t, pool.ForTests(dir))
	file := writeMooncakeStoreFile(t, dir, p, "kvshare-node-scope")
	twoScopedEngines(t, "mooncake:"+file, "MC_TCP_BIND_ADDRESS="+p.Host())
}
