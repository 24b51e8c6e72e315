package loopback

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/patience"
)

// childEnv makes this test binary a child for the tests below: "listen
// PORT" listens on PORT and waits, "sleep" waits, "exit" prints and
// exits 3, "orphan DIR" starts a sleeping child, prints its PID and
// exits without stopping it.
const childEnv = "KVSHARE_LOOPBACK_CHILD"

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(child(role))
	}
	os.Exit(m.Run())
}

func child(role string) int {
	verb, arg, _ := strings.Cut(role, " ")
	switch verb {
	case "listen":
		time.Sleep(100 * time.Millisecond) // not at once: WaitReady must wait
		l, err := net.Listen("tcp4", HostPort(atoi(arg)))
		if err != nil {
			fmt.Println("listen:", err)
			return 1
		}
		defer l.Close()
		select {}
	case "sleep":
		select {}
	case "exit":
		fmt.Println("giving up at once")
		return 3
	case "orphan":
		pr, err := NewLauncher().Spawn("sleeper", os.Args[0], nil, []string{childEnv + "=sleep"}, filepath.Join(arg, "sleeper.log"))
		if err != nil {
			fmt.Println("spawn:", err)
			return 1
		}
		fmt.Println("pid", pr.PID)
		return 0 // no Stop, no Close
	}
	return 2
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// spawnChild starts this test binary as a child in role, stopped at the
// test's end.
func spawnChild(t *testing.T, l *Launcher, role string) *Process {
	t.Helper()
	pr, err := l.Spawn("child", os.Args[0], nil, []string{childEnv + "=" + role}, filepath.Join(t.TempDir(), "child.log"))
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, pr.Stop(slog.New(slog.DiscardHandler), patience.Wait())) })
	return pr
}

func TestWaitReadyWaitsForTheChildsOwnListener(t *testing.T) {
	l := NewLauncher()
	t.Cleanup(l.Close)
	ports, err := PickPorts(1)
	require.NoError(t, err)
	pr := spawnChild(t, l, "listen "+strconv.Itoa(ports[0]))
	require.NoError(t, pr.WaitReady(t.Context(), patience.Wait(), ports[0]))
	owns, known := OwnsListener(pr.PID, ports[0])
	assert.True(t, owns || !known)
	assert.True(t, pr.Alive())
	assert.Nil(t, pr.State())
}

// A port another program holds is not the child's: WaitReady runs out of
// time rather than take the other listener for the child's.
func TestWaitReadyIsNotFooledByAnotherListener(t *testing.T) {
	other, err := net.Listen("tcp4", HostPort(0))
	require.NoError(t, err)
	defer other.Close()
	l := NewLauncher()
	t.Cleanup(l.Close)
	pr := spawnChild(t, l, "sleep")
	// 300 ms is an input: the child never listens, so the wait must run out.
	err = pr.WaitReady(t.Context(), 300*time.Millisecond, other.Addr().(*net.TCPAddr).Port)
	require.ErrorIs(t, err, ErrNotReady)
	assert.Contains(t, err.Error(), pr.LogPath)
}

func TestWaitReadyReportsAnEarlyExitWithTheLog(t *testing.T) {
	l := NewLauncher()
	t.Cleanup(l.Close)
	pr := spawnChild(t, l, "exit")
	err := pr.WaitReady(t.Context(), patience.Wait(), 1)
	require.ErrorIs(t, err, ErrEarlyExit)
	assert.Contains(t, err.Error(), "giving up at once")
	assert.Contains(t, err.Error(), "exit status 3")
	assert.False(t, pr.Alive())
	require.NotNil(t, pr.State())
	assert.Equal(t, 3, pr.State().ExitCode())
}

func TestWaitReadyEndsWithItsContext(t *testing.T) {
	l := NewLauncher()
	t.Cleanup(l.Close)
	pr := spawnChild(t, l, "sleep")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := pr.WaitReady(ctx, time.Minute, 1) // never reached: ctx has ended
	require.ErrorIs(t, err, ErrNotReady)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestFreezeResumeStopKill(t *testing.T) {
	l := NewLauncher()
	t.Cleanup(l.Close)
	pr := spawnChild(t, l, "sleep")
	require.NoError(t, pr.Freeze(patience.Wait()))
	assert.Equal(t, byte('T'), ProcState(pr.PID))
	require.NoError(t, pr.Resume(patience.Wait()))
	assert.NotEqual(t, byte('T'), ProcState(pr.PID))

	// Stop reaches a frozen child too (SIGCONT with the SIGTERM).
	require.NoError(t, pr.Freeze(patience.Wait()))
	require.NoError(t, pr.Stop(slog.New(slog.DiscardHandler), patience.Wait()))
	assert.False(t, pr.Alive())
	assert.Equal(t, syscall.SIGTERM, pr.State().Sys().(syscall.WaitStatus).Signal())
	require.NoError(t, pr.Signal(syscall.SIGTERM), "a reaped child is signalled as a no-op")

	pr = spawnChild(t, l, "sleep")
	require.NoError(t, pr.Kill(patience.Wait()))
	assert.Equal(t, syscall.SIGKILL, pr.State().Sys().(syscall.WaitStatus).Signal())
	err := pr.Freeze(time.Second) // an input: a reaped child answers at once
	require.Error(t, err, "a reaped child cannot be frozen")
	assert.ErrorIs(t, err, ErrExited)
}

func TestChildrenDieWithTheirParent(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=orphan "+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), "%s", out.String())
	_, line, ok := strings.Cut(out.String(), "pid ")
	require.True(t, ok, "%s", out.String())
	pid := atoi(strings.TrimSpace(line))
	require.Positive(t, pid, "%s", out.String())
	// Pdeathsig delivers SIGKILL; a zombie waiting for a reaper is dead.
	assert.Eventually(t, func() bool { return syscall.Kill(pid, 0) == syscall.ESRCH || ProcState(pid) == 'Z' },
		patience.Wait(), 10*time.Millisecond, "pid %d outlived the process that started it", pid)
}

func TestSpawnNamesWhatFailed(t *testing.T) {
	l := NewLauncher()
	t.Cleanup(l.Close)
	_, err := l.Spawn("ghost", filepath.Join(t.TempDir(), "absent"), nil, nil, filepath.Join(t.TempDir(), "ghost.log"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "starting ghost")
	_, err = l.Spawn("ghost", os.Args[0], nil, nil, filepath.Join(t.TempDir(), "no", "such", "dir.log"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ghost log")
}

// waitState returns once the child shows the state asked for, and fails
// with ErrSignalState, naming the child, when it does not within the
// bound.
func TestWaitStateBound(t *testing.T) {
	l := NewLauncher()
	t.Cleanup(l.Close)
	pr := spawnChild(t, l, "sleep")
	require.NoError(t, pr.waitState(patience.Wait(), func(s byte) bool { return s == 'S' || s == 'R' }, "running"))
	// 200 ms is an input: the state never comes, so the bound must run out.
	err := pr.waitState(200*time.Millisecond, func(s byte) bool { return s == 'T' }, "stopped")
	require.ErrorIs(t, err, ErrSignalState)
	assert.Contains(t, err.Error(), "child pid")
	assert.Contains(t, err.Error(), "not stopped after 200ms")
}
