package pool

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/loopback"
	"github.com/kvshare/kvshare/patience"
)

// The master freezes and resumes as the provider does, and each can be
// frozen while the other is: the two flags are apart.
func TestFreezeAndResumeTheMaster(t *testing.T) {
	p, err := startFake(t, nil)
	require.NoError(t, err)
	pid, provider := p.PID(Master), p.PID(Provider)

	require.ErrorIs(t, p.ResumeMaster(), ErrState, "resume before freeze")
	require.NoError(t, p.FreezeMaster())
	assert.Equal(t, byte('T'), loopback.ProcState(pid))
	assert.NotEqual(t, byte('T'), loopback.ProcState(provider), "the provider runs on")
	require.ErrorIs(t, p.FreezeMaster(), ErrState, "freeze twice")
	require.NoError(t, p.Freeze(), "the provider freezes apart from the master")
	require.NoError(t, p.Resume())
	require.NoError(t, p.ResumeMaster())
	assert.NotEqual(t, byte('T'), loopback.ProcState(pid))
	accepts(t, p.MasterAddress())
	require.ErrorIs(t, p.ResumeMaster(), ErrState, "resume twice")

	require.NoError(t, p.FreezeMaster())
	require.NoError(t, p.Stop(), "a frozen master stops too")
	assert.True(t, gone(pid))
	assert.ErrorIs(t, p.FreezeMaster(), ErrStopped)
	assert.ErrorIs(t, p.ResumeMaster(), ErrStopped)
	assert.ErrorIs(t, p.KillProvider(), ErrStopped)
}

// A frozen master can be killed and started again; the new one is not
// frozen.
func TestKillAFrozenMaster(t *testing.T) {
	p, err := startFake(t, nil)
	require.NoError(t, err)
	old := p.PID(Master)
	require.NoError(t, p.FreezeMaster())
	require.NoError(t, p.KillMaster())
	assert.True(t, gone(old))
	assert.ErrorIs(t, p.FreezeMaster(), ErrState, "no master runs")
	assert.ErrorIs(t, p.ResumeMaster(), ErrState, "no master runs")

	require.NoError(t, p.StartMaster(context.Background()))
	assert.ErrorIs(t, p.ResumeMaster(), ErrState, "the new master is not frozen")
	require.NoError(t, p.FreezeMaster())
	require.NoError(t, p.ResumeMaster())
}

// KillProvider is SIGKILL: even a provider that ignores SIGTERM, or a
// frozen one, is gone at once, and a new one starts on its port.
func TestKillProvider(t *testing.T) {
	p, err := startFake(t, func(o *Options) {
		o.ProviderEnv = []string{"FAKEMC_IGNORE_TERM=1"}
		// The restarted provider ignores SIGTERM too: the SIGTERM wait
		// runs out at Stop (an input), and the same span bounds a
		// reaping after SIGKILL, so it comes from patience.
		o.StopTimeout = patience.Scaled(time.Second)
	})
	require.NoError(t, err)
	old, port := p.PID(Provider), p.ProviderPort()
	require.NoError(t, p.Freeze())
	require.NoError(t, p.KillProvider())
	assert.True(t, gone(old))
	assert.Zero(t, p.PID(Provider))
	require.NoError(t, p.Healthy(), "a killed provider is not an exit")
	assert.ErrorIs(t, p.KillProvider(), ErrState)
	assert.ErrorIs(t, p.Resume(), ErrState, "the frozen provider is gone")

	require.NoError(t, p.StartProvider(context.Background()))
	assert.NotEqual(t, old, p.PID(Provider))
	assert.Equal(t, port, p.ProviderPort(), "its old port was free")
	accepts(t, loopback.HostPort(p.ProviderPort()))
}

// A master that died by itself is reported as exited, not as frozen or
// missing.
func TestFreezeAMasterThatDied(t *testing.T) {
	p, err := startFake(t, nil)
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(p.PID(Master), syscall.SIGKILL))
	require.Eventually(t, func() bool { return p.Healthy() != nil }, patience.Wait(), 10*time.Millisecond)
	assert.ErrorIs(t, p.FreezeMaster(), ErrExited)
	assert.ErrorIs(t, p.ResumeMaster(), ErrExited)
}
