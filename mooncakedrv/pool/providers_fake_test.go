package pool

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/loopback"
)

func TestSeveralProvidersEachOnItsOwnPort(t *testing.T) {
	p, err := startFake(t, func(o *Options) { o.Providers = 3 })
	require.NoError(t, err)
	require.Equal(t, 3, p.Providers())
	ports, pids := map[int]bool{}, map[int]bool{}
	for i := range 3 {
		port, pid := p.ProviderPortOf(i), p.ProviderPID(i)
		require.NotZero(t, port, "provider %d", i)
		require.NotZero(t, pid, "provider %d", i)
		accepts(t, loopback.HostPort(port))
		ports[port], pids[pid] = true, true
	}
	assert.Len(t, ports, 3, "a port each")
	assert.Len(t, pids, 3, "a process each")
	assert.Equal(t, p.ProviderPortOf(0), p.ProviderPort(), "the methods without an index act on provider 0")
	assert.Equal(t, p.ProviderPID(0), p.PID(Provider))

	// One provider killed, frozen or stopped leaves the others alone.
	old := p.ProviderPID(1)
	require.NoError(t, p.KillProviderAt(1))
	assert.True(t, gone(old))
	assert.Zero(t, p.ProviderPID(1))
	assert.ErrorIs(t, p.FreezeProvider(1), ErrState)
	require.NoError(t, p.FreezeProvider(2))
	assert.Equal(t, byte('T'), loopback.ProcState(p.ProviderPID(2)))
	assert.NotEqual(t, byte('T'), loopback.ProcState(p.ProviderPID(0)))
	require.NoError(t, p.ResumeProvider(2))
	require.NoError(t, p.Healthy(), "a killed provider is not an exit")

	require.NoError(t, p.StartProviderAt(context.Background(), 1))
	assert.NotEqual(t, old, p.ProviderPID(1))
	accepts(t, loopback.HostPort(p.ProviderPortOf(1)))
	assert.ErrorIs(t, p.StartProviderAt(context.Background(), 1), ErrState, "it runs")
	assert.ErrorIs(t, p.StartProviderAt(context.Background(), 3), ErrState, "no provider 3")
	assert.ErrorIs(t, p.KillProviderAt(-1), ErrState)
	require.NoError(t, p.StopProviderAt(0))
	assert.NotZero(t, p.ProviderPID(2))
}

func TestProvidersOutOfRangeAreRefused(t *testing.T) {
	for _, n := range []int{-1, MaxProviders + 1} {
		_, err := Start(context.Background(), Options{Dir: fakeBuild, Providers: n})
		assert.ErrorIs(t, err, ErrOptions, "Providers %d", n)
	}
}
