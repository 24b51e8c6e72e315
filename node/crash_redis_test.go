package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/patience"
	"github.com/kvshare/kvshare/redisdrv/redistest"
)

// TestRedisNodeCrashMidFetch runs the node-crash test over Redis (the
// Redis tier: KVSHARE_REDIS_SERVER names redis-server; unset, it
// skips). The node process reaches the server through a proxy of the
// test's, which holds the reply to the fetch's GET: the command ran, and
// the bytes wait inside the store's path to the node when the node is
// SIGKILLed; the proxy writes them on after.
func TestRedisNodeCrashMidFetch(t *testing.T) {
	s := redistest.StartForTest(t, redistest.Options{})
	proxy, err := redistest.NewProxy(s.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })
	file := filepath.Join(t.TempDir(), "store.toml")
	toml := fmt.Sprintf("[blob]\nkey_prefix = \"kvshare-node-crash\"\n\n[redis]\naddress = %s\n", strconv.Quote(proxy.Addr()))
	require.NoError(t, os.WriteFile(file, []byte(toml), 0o644))
	crashMidFetch(t, crashStore{name: "redis", store: "redis:" + file,
		hold: func(t *testing.T, _ *nodeProc, _ string) (func(), func()) {
			h := proxy.HoldReplies(redistest.Command("GET"))
			return func() {
					ctx, cancel := patience.For(t).Context(context.Background())
					defer cancel()
					require.NoError(t, h.Held(ctx), "the fetch's GET held by the proxy")
				}, func() {
					h.Release()
				}
		}})
}
