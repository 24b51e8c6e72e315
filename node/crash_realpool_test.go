package node

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/mooncakedrv/pool/pooltest"
)

// TestRealNodeCrashMidFetch runs the node-crash test on a real Mooncake
// pool (the real-pool tier: KVSHARE_MOONCAKE_DIR; unset, it skips). The
// node process is the pool's client over TCP; the only provider is
// frozen (SIGSTOP) before the fetch, so the fetch is inside the store
// (the driver holds it open) when the node is SIGKILLed; the provider is
// resumed after, and the engine's old slots are watched while a node
// started again round-trips through the same pool.
func TestRealNodeCrashMidFetch(t *testing.T) {
	dir := pooltest.Dir(t)
	opts := pool.ForTests(dir)
	opts.ClientTTL = 60 * time.Second // the provider is frozen a while: the master keeps its objects
	p := pooltest.Start(t, opts)
	file := writeMooncakeStoreFile(t, dir, p, "kvshare-node-crash")
	crashMidFetch(t, crashStore{name: "mooncake", store: "mooncake:" + file,
		// The node's Mooncake client binds its transfer engine to the
		// pool's address; a transfer to a provider that stopped
		// answering ends after 3 s, not Mooncake's 30.
		env: []string{"MC_TCP_BIND_ADDRESS=" + p.Host(), "MC_TCP_STATUS_TIMEOUT_SEC=3"},
		hold: func(t *testing.T, n *nodeProc, _ string) (func(), func()) {
			require.NoError(t, p.Freeze())
			return func() { n.do("open") }, func() { require.NoError(t, p.Resume()) }
		}})
}
