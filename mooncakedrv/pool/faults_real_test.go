package pool_test

import (
	"net"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/mooncakedrv/pool/pooltest"
)

// The real Mooncake: a frozen master is stopped in the kernel's eyes yet
// its listening sockets still complete a TCP handshake (nothing answers
// on them), and it serves again once resumed; a killed provider is gone
// at once, and a new one starts.
func TestRealPoolFaults(t *testing.T) {
	opts := pool.ForTests(pooltest.Dir(t))
	opts.SegmentSize = 64 << 20
	p := pooltest.Start(t, opts)

	master := p.PID(pool.Master)
	require.NoError(t, p.FreezeMaster())
	assert.Equal(t, "T", procState(t, master))
	accepts(t, p.MasterAddress()) // the kernel's backlog, not the master
	require.NoError(t, p.ResumeMaster())
	assert.NotEqual(t, "T", procState(t, master))
	metadataAnswers(t, p.MetadataURL())
	require.NoError(t, p.Healthy())

	provider := p.PID(pool.Provider)
	require.NoError(t, p.KillProvider())
	assert.ErrorIs(t, syscall.Kill(provider, 0), syscall.ESRCH, "the killed provider is gone")
	assert.Zero(t, p.PID(pool.Provider))
	require.NoError(t, p.StartProvider(t.Context()))
	assert.NotEqual(t, provider, p.PID(pool.Provider))
	accepts(t, net.JoinHostPort(pool.Host, strconv.Itoa(p.ProviderPort())))
	require.NoError(t, p.Healthy())
}
