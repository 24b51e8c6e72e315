package pool

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/loopback"
	"github.com/kvshare/kvshare/patience"
)

// startFake starts a pool of fake processes for t, stopped at cleanup,
// and checks then that no fake process is left.
func startFake(t *testing.T, edit func(*Options)) (*Pool, error) {
	t.Helper()
	opts := ForTests(fakeBuild)
	opts.LogDir = t.TempDir()
	opts.Logger = slog.New(slog.DiscardHandler)
	if edit != nil {
		edit(&opts)
	}
	p, err := Start(context.Background(), opts)
	t.Cleanup(func() {
		if p != nil {
			assert.NoError(t, p.Stop())
		}
		assert.Empty(t, fakeProcesses(t), "fake processes left running")
	})
	return p, err
}

// fakeProcesses lists the running processes of the fake Mooncake, from
// /proc (the package's tests do not run in parallel).
func fakeProcesses(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && strings.HasPrefix(exe, fakeBuild+string(filepath.Separator)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// accepts dials addr once.
func accepts(t *testing.T, addr string) {
	t.Helper()
	conn, err := net.Dial("tcp4", addr)
	require.NoError(t, err, "dialing %s", addr)
	require.NoError(t, conn.Close())
}

// gone reports whether no process has pid any more.
func gone(pid int) bool { return syscall.Kill(pid, 0) == syscall.ESRCH }

func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, s, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	port, err := strconv.Atoi(s)
	require.NoError(t, err)
	return port
}

func TestStartServesAndStopLeavesNothing(t *testing.T) {
	p, err := startFake(t, nil)
	require.NoError(t, err)

	assert.True(t, strings.HasPrefix(p.MasterAddress(), "127.0.0.1:"))
	assert.Regexp(t, `^http://127\.0\.0\.1:\d+/metadata$`, p.MetadataURL())
	assert.Equal(t, []string{"MC_TCP_BIND_ADDRESS=127.0.0.1"}, p.ClientEnv())
	accepts(t, p.MasterAddress())
	accepts(t, strings.TrimSuffix(strings.TrimPrefix(p.MetadataURL(), "http://"), "/metadata"))
	accepts(t, loopback.HostPort(p.ProviderPort()))
	for _, port := range []int{portOf(t, p.MasterAddress()), p.ProviderPort()} {
		assert.True(t, loopback.Allowed(port), "port %d", port)
	}

	pids := p.PIDs()
	require.Len(t, pids, 2)
	assert.ElementsMatch(t, pids, []int{p.PID(Master), p.PID(Provider)})
	assert.ElementsMatch(t, pids, fakeProcesses(t))
	providerLog, err := os.ReadFile(filepath.Join(p.LogDir(), "provider-1.log"))
	require.NoError(t, err)
	assert.Contains(t, string(providerLog), "MC_TCP_BIND_ADDRESS=127.0.0.1")
	assert.Contains(t, string(providerLog), "--master_server_address="+p.MasterAddress())

	require.NoError(t, p.Stop())
	assert.Empty(t, p.PIDs())
	for _, pid := range pids {
		assert.True(t, gone(pid), "pid %d still there", pid)
	}
	require.NoError(t, p.Stop(), "Stop twice")
	assert.ErrorIs(t, p.Freeze(), ErrStopped)
	assert.ErrorIs(t, p.StartProvider(context.Background()), ErrStopped)
	assert.ErrorIs(t, p.StartMaster(context.Background()), ErrStopped)
	assert.ErrorIs(t, p.Healthy(), ErrStopped)
}

func TestOwnLogFolderIsRemovedOnStop(t *testing.T) {
	p, err := startFake(t, func(o *Options) { o.LogDir = "" })
	require.NoError(t, err)
	dir := p.LogDir()
	assert.DirExists(t, dir)
	require.NoError(t, p.Stop())
	assert.NoDirExists(t, dir)
}

func TestFreezeAndResume(t *testing.T) {
	p, err := startFake(t, nil)
	require.NoError(t, err)
	pid := p.PID(Provider)

	require.ErrorIs(t, p.Resume(), ErrState, "resume before freeze")
	require.NoError(t, p.Freeze())
	assert.Equal(t, byte('T'), loopback.ProcState(pid))
	require.ErrorIs(t, p.Freeze(), ErrState, "freeze twice")
	require.NoError(t, p.Resume())
	assert.NotEqual(t, byte('T'), loopback.ProcState(pid))
	accepts(t, loopback.HostPort(p.ProviderPort()))

	require.NoError(t, p.Freeze())
	require.NoError(t, p.Stop(), "a frozen provider stops too")
	assert.True(t, gone(pid))
}

func TestProviderRestartsEmpty(t *testing.T) {
	p, err := startFake(t, nil)
	require.NoError(t, err)
	old, port := p.PID(Provider), p.ProviderPort()

	require.NoError(t, p.StopProvider())
	assert.Zero(t, p.PID(Provider))
	assert.True(t, gone(old))
	assert.ErrorIs(t, p.Freeze(), ErrState)
	assert.ErrorIs(t, p.StopProvider(), ErrState)
	require.NoError(t, p.Healthy(), "a stopped provider is not an exit")

	require.NoError(t, p.StartProvider(context.Background()))
	assert.NotEqual(t, old, p.PID(Provider))
	assert.Equal(t, port, p.ProviderPort(), "its old port was free")
	accepts(t, loopback.HostPort(p.ProviderPort()))
	assert.ErrorIs(t, p.StartProvider(context.Background()), ErrState)
	assert.FileExists(t, filepath.Join(p.LogDir(), "provider-2.log"))
}

func TestMasterRestartsOnItsAddress(t *testing.T) {
	for _, kill := range []bool{true, false} {
		t.Run(fmt.Sprintf("kill=%v", kill), func(t *testing.T) {
			p, err := startFake(t, nil)
			require.NoError(t, err)
			old, addr, meta := p.PID(Master), p.MasterAddress(), p.MetadataURL()

			if kill {
				require.NoError(t, p.KillMaster())
			} else {
				require.NoError(t, p.StopMaster())
			}
			assert.Zero(t, p.PID(Master))
			assert.True(t, gone(old))
			assert.ErrorIs(t, p.KillMaster(), ErrState)
			assert.ErrorIs(t, p.StartProvider(context.Background()), ErrState, "the provider runs")

			require.NoError(t, p.StartMaster(context.Background()))
			assert.NotEqual(t, old, p.PID(Master))
			assert.Equal(t, addr, p.MasterAddress())
			assert.Equal(t, meta, p.MetadataURL())
			accepts(t, p.MasterAddress())
			assert.ErrorIs(t, p.StartMaster(context.Background()), ErrState)
		})
	}
}

func TestEarlyExitIsReportedWithItsLog(t *testing.T) {
	logs := t.TempDir()
	_, err := startFake(t, func(o *Options) {
		o.LogDir = logs
		o.Attempts = 2
		o.ProviderEnv = []string{"FAKEMC_EXIT=1"}
	})
	require.ErrorIs(t, err, ErrEarlyExit)
	msg := err.Error()
	assert.Contains(t, msg, "provider did not start in 2 attempts")
	assert.Contains(t, msg, "exit status 3")
	assert.Contains(t, msg, "fakemooncake: scripted failure")
	assert.Contains(t, msg, filepath.Join(logs, "provider-2.log"))
	assert.FileExists(t, filepath.Join(logs, "provider-1.log"))
}

func TestFailedStartKeepsItsOwnLogFolder(t *testing.T) {
	_, err := startFake(t, func(o *Options) {
		o.LogDir = ""
		o.Attempts = 1
		o.MasterEnv = []string{"FAKEMC_EXIT=1"}
	})
	require.ErrorIs(t, err, ErrEarlyExit)
	_, rest, ok := strings.Cut(err.Error(), "; log ")
	require.True(t, ok, err.Error())
	path, _, _ := strings.Cut(rest, ":\n")
	assert.FileExists(t, path)
	require.NoError(t, os.RemoveAll(filepath.Dir(path)))
}

// A port taken between the probe and the launch: the process exits as
// the real ones do, and the pool launches it again on fresh ports.
func TestBindFailureIsRetriedOnFreshPorts(t *testing.T) {
	var mu sync.Mutex
	var held []net.Listener
	taken := map[Role]int{}
	t.Cleanup(func() {
		for _, l := range held {
			l.Close()
		}
	})
	p, err := startFake(t, func(o *Options) {
		o.beforeLaunch = func(role Role, attempt int, ports []int) {
			if attempt != 1 {
				return
			}
			port := ports[len(ports)-1] // the master's metrics port, the provider's own
			if role == Master {
				port = ports[0] // its RPC port, which it binds last
			}
			l, err := net.Listen("tcp4", loopback.HostPort(port))
			require.NoError(t, err)
			mu.Lock()
			held = append(held, l)
			taken[role] = port
			mu.Unlock()
		}
	})
	require.NoError(t, err)
	assert.NotEqual(t, taken[Master], portOf(t, p.MasterAddress()))
	assert.NotEqual(t, taken[Provider], p.ProviderPort())
	for _, role := range []Role{Master, Provider} {
		first, err := os.ReadFile(filepath.Join(p.LogDir(), string(role)+"-1.log"))
		require.NoError(t, err)
		assert.Contains(t, string(first), "address already in use", role)
		assert.FileExists(t, filepath.Join(p.LogDir(), string(role)+"-2.log"))
	}
	accepts(t, p.MasterAddress())
	accepts(t, loopback.HostPort(p.ProviderPort()))
}

func TestNotReadyIsBoundedAndCleanedUp(t *testing.T) {
	_, err := startFake(t, func(o *Options) {
		// Per process: a bound on the fake master's start (from
		// patience, so a loaded machine does not fail it), and an input
		// for the provider, which never listens: its wait runs out.
		o.StartTimeout = patience.Wait()
		o.ProviderEnv = []string{"FAKEMC_NO_LISTEN=1"}
	})
	require.ErrorIs(t, err, ErrNotReady)
	assert.Contains(t, err.Error(), "provider")
	assert.Contains(t, err.Error(), "not accepting")
}

func TestStartHonoursItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Start(ctx, Options{Dir: fakeBuild, Logger: slog.New(slog.DiscardHandler)})
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, fakeProcesses(t))
}

func TestStopEscalatesToSIGKILL(t *testing.T) {
	p, err := startFake(t, func(o *Options) {
		// An input for SIGTERM, which the processes ignore, and the bound
		// on their reaping after SIGKILL: so it comes from patience.
		o.StopTimeout = patience.Scaled(time.Second)
		o.MasterEnv = []string{"FAKEMC_IGNORE_TERM=1"}
		o.ProviderEnv = []string{"FAKEMC_IGNORE_TERM=1"}
	})
	require.NoError(t, err)
	pids := p.PIDs()
	require.NoError(t, p.Stop())
	for _, pid := range pids {
		assert.True(t, gone(pid), "pid %d", pid)
	}
}

func TestHealthyReportsAProcessThatDied(t *testing.T) {
	p, err := startFake(t, nil)
	require.NoError(t, err)
	require.NoError(t, p.Healthy())
	require.NoError(t, syscall.Kill(p.PID(Provider), syscall.SIGKILL))
	require.Eventually(t, func() bool { return p.Healthy() != nil }, patience.Wait(), 10*time.Millisecond)
	err = p.Healthy()
	require.ErrorIs(t, err, ErrExited)
	assert.Contains(t, err.Error(), "signal: killed")
	assert.ErrorIs(t, p.Freeze(), ErrExited)

	require.NoError(t, p.StartProvider(context.Background()), "a provider that died can be started again")
	require.NoError(t, p.Healthy())
}

func TestStartRefusesAnUnusableFolder(t *testing.T) {
	_, err := Start(context.Background(), Options{Dir: t.TempDir()})
	require.ErrorIs(t, err, ErrLayout)
	_, err = Start(context.Background(), Options{Dir: "relative"})
	require.ErrorIs(t, err, ErrNotAbsolute)
	_, err = Start(context.Background(), Options{Dir: fakeBuild, PutDiscardTimeout: time.Millisecond})
	require.ErrorIs(t, err, ErrOptions)
}
