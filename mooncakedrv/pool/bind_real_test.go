package pool

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/loopback"
)

// The real master and provider, each given a port another program holds
// on its first launch: each exits, and the pool launches it again on
// fresh ports. (Internal, for the launch hook; so it reads the tier
// itself rather than through pooltest.)
func TestRealBindFailureIsRetried(t *testing.T) {
	dir, on, err := Tier()
	if !on {
		t.Skip(TierOff)
	}
	require.NoError(t, err, "real-pool tier on but unusable")

	var mu sync.Mutex
	taken := map[Role]int{}
	opts := ForTests(dir)
	opts.SegmentSize = 64 << 20
	opts.LogDir = t.TempDir()
	opts.Logger = slog.New(slog.NewTextHandler(t.Output(), nil))
	opts.beforeLaunch = func(role Role, attempt int, ports []int) {
		if attempt != 1 {
			return
		}
		l, err := net.Listen("tcp4", loopback.HostPort(ports[0])) // the master's RPC port, the provider's own
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		mu.Lock()
		taken[role] = ports[0]
		mu.Unlock()
	}
	p, err := Start(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Stop()) })

	mu.Lock()
	defer mu.Unlock()
	assert.NotEqual(t, taken[Master], portOf(t, p.MasterAddress()))
	assert.NotEqual(t, taken[Provider], p.ProviderPort())
	for _, role := range []Role{Master, Provider} {
		assert.FileExists(t, filepath.Join(opts.LogDir, string(role)+"-1.log"))
		assert.FileExists(t, filepath.Join(opts.LogDir, string(role)+"-2.log"))
		_, err := os.Stat(filepath.Join(opts.LogDir, string(role)+"-3.log"))
		assert.ErrorIs(t, err, os.ErrNotExist)
	}
	accepts(t, p.MasterAddress())
	accepts(t, loopback.HostPort(p.ProviderPort()))
	require.NoError(t, p.Healthy())
}
