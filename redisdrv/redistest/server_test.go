package redistest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/loopback"
)

// gone reports whether no process has pid any more (the child was
// reaped: signal 0 finds nothing).
func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

func TestStartPingStop(t *testing.T) {
	binary := Require(t)
	s, err := Start(t.Context(), binary, Options{Logger: testLogger(t)})
	require.NoError(t, err)
	Cleanup(t, s)
	assert.Equal(t, loopback.HostPort(s.Port()), s.Addr())
	assert.True(t, loopback.Allowed(s.Port()))
	assert.Regexp(t, `^\d+\.\d+\.\d+$`, s.Version())
	pid := s.PID()
	require.NotZero(t, pid)
	assert.Equal(t, filepath.Join(s.Dir(), "redis-1.log"), s.LogPath())

	c := serverClient(t, s)
	pong, err := c.Do(boundedCtx(t), c.B().Ping().Build()).ToString()
	require.NoError(t, err)
	assert.Equal(t, "PONG", pong)
	for key, want := range map[string]string{"save": "", "appendonly": "no", "bind": "127.0.0.1", "maxmemory-policy": "noeviction", "maxmemory": "0"} {
		got, err := c.Do(boundedCtx(t), c.B().ConfigGet().Parameter(key).Build()).AsStrMap()
		require.NoError(t, err)
		assert.Equal(t, want, got[key], "CONFIG GET %s", key)
	}
	c.Close()

	require.NoError(t, s.Stop())
	assert.True(t, gone(pid), "pid %d still exists after Stop", pid)
	assert.True(t, loopback.Free(s.Port()), "port %d not free after Stop", s.Port())
	assert.Zero(t, s.PID())
	assert.NoDirExists(t, s.Dir(), "Stop removes the temporary folder Start made")
	require.NoError(t, s.Stop(), "Stop is idempotent")
	require.ErrorIs(t, s.Restart(t.Context()), ErrStopped)
	require.ErrorIs(t, s.Freeze(), ErrStopped)
	require.ErrorIs(t, s.Kill(), ErrStopped)
}

func TestStartKeepsGivenDirAndAppliesExtra(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a folder")
	s := StartForTest(t, Options{Logger: testLogger(t), Dir: dir, Extra: [][2]string{{"hz", "100"}, {"client-output-buffer-limit", "pubsub 64mb 16mb 60"}}})
	c := serverClient(t, s)
	got, err := c.Do(boundedCtx(t), c.B().ConfigGet().Parameter("hz").Build()).AsStrMap()
	require.NoError(t, err)
	assert.Equal(t, "100", got["hz"])
	got, err = c.Do(boundedCtx(t), c.B().ConfigGet().Parameter("client-output-buffer-limit").Build()).AsStrMap()
	require.NoError(t, err)
	assert.Contains(t, got["client-output-buffer-limit"], "pubsub 67108864 16777216 60")
	got, err = c.Do(boundedCtx(t), c.B().ConfigGet().Parameter("dir").Build()).AsStrMap()
	require.NoError(t, err)
	assert.Equal(t, dir, got["dir"])
	require.NoError(t, s.Stop())
	assert.FileExists(t, filepath.Join(dir, "redis-1.log"))
	assert.FileExists(t, filepath.Join(dir, "redis.conf"))
}

func TestKill(t *testing.T) {
	s := StartForTest(t, Options{})
	pid := s.PID()
	require.NoError(t, s.Kill())
	assert.True(t, gone(pid), "pid %d still exists after Kill", pid)
	assert.Zero(t, s.PID())
	require.ErrorIs(t, s.Kill(), ErrNotRunning)
	require.ErrorIs(t, s.Freeze(), ErrNotRunning)
	require.NoError(t, s.Restart(t.Context()), "Restart starts a killed server again")
	assert.NotZero(t, s.PID())
}

func TestFreezeAndResume(t *testing.T) {
	s := StartForTest(t, Options{})
	c := serverClient(t, s)
	require.NoError(t, c.Do(boundedCtx(t), c.B().Set().Key("k").Value("v").Build()).Error())

	require.NoError(t, s.Freeze())
	assert.Equal(t, byte('T'), loopback.ProcState(s.PID()))
	require.ErrorIs(t, s.Freeze(), ErrState)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond) // an input: the server is frozen
	err := c.Do(ctx, c.B().Get().Key("k").Build()).Error()
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "a GET to a frozen server")

	require.NoError(t, s.Resume())
	require.ErrorIs(t, s.Resume(), ErrState)
	v, err := c.Do(boundedCtx(t), c.B().Get().Key("k").Build()).ToString()
	require.NoError(t, err)
	assert.Equal(t, "v", v)
}

func TestRestartOnSamePort(t *testing.T) {
	s := StartForTest(t, Options{})
	port, pid := s.Port(), s.PID()
	c := serverClient(t, s)
	require.NoError(t, c.Do(boundedCtx(t), c.B().Set().Key("before").Value("1").Build()).Error())
	c.Close()

	require.NoError(t, s.Restart(t.Context()))
	assert.Equal(t, port, s.Port())
	assert.NotEqual(t, pid, s.PID())
	assert.True(t, gone(pid), "the old pid %d still exists", pid)
	assert.Equal(t, filepath.Join(s.Dir(), "redis-2.log"), s.LogPath())

	c = serverClient(t, s)
	err := c.Do(boundedCtx(t), c.B().Get().Key("before").Build()).Error()
	assert.True(t, rueidis.IsRedisNil(err), "a key set before the restart is gone: %v", err)
	require.NoError(t, c.Do(boundedCtx(t), c.B().Set().Key("after").Value("2").Build()).Error())
	v, err := c.Do(boundedCtx(t), c.B().Get().Key("after").Build()).ToString()
	require.NoError(t, err)
	assert.Equal(t, "2", v)
}

func TestRestartOfFrozenServer(t *testing.T) {
	s := StartForTest(t, Options{})
	require.NoError(t, s.Freeze())
	require.NoError(t, s.Restart(t.Context()))
	require.NoError(t, s.Freeze(), "the new server is not frozen")
	require.NoError(t, s.Resume())
}

func TestMaxMemoryNoEvictionAnswersOOM(t *testing.T) {
	s := StartForTest(t, Options{MaxMemory: 4 << 20})
	c := serverClient(t, s)
	got, err := c.Do(boundedCtx(t), c.B().ConfigGet().Parameter("maxmemory").Build()).AsStrMap()
	require.NoError(t, err)
	assert.Equal(t, "4194304", got["maxmemory"])
	big := string(bytes.Repeat([]byte{'x'}, 8<<20))
	err = c.Do(boundedCtx(t), c.B().Set().Key("big").Value(big).Build()).Error()
	require.Error(t, err)
	redisErr, ok := rueidis.IsRedisErr(err)
	require.True(t, ok, "a Redis error reply, not %v", err)
	assert.True(t, strings.HasPrefix(redisErr.Error(), "OOM"), "the error %q starts with OOM", redisErr.Error())
}

func TestStartEarlyExitQuotesLog(t *testing.T) {
	binary := Require(t)
	dir := t.TempDir()
	_, err := Start(t.Context(), binary, Options{Logger: testLogger(t), Dir: dir, Extra: [][2]string{{"no-such-directive", "1"}}})
	require.ErrorIs(t, err, ErrEarlyExit)
	assert.Contains(t, err.Error(), "no-such-directive", "the log tail names the bad line")
	assert.Contains(t, err.Error(), filepath.Join(dir, "redis-"), "the error names the log")
}

func TestStartOnTakenPortFails(t *testing.T) {
	s := StartForTest(t, Options{})
	binary := Require(t)
	_, err := Start(t.Context(), binary, Options{Logger: testLogger(t), Port: s.Port(), Dir: t.TempDir()})
	require.ErrorIs(t, err, ErrEarlyExit, "a given port is not changed")
}

func TestStartHonoursContext(t *testing.T) {
	binary := Require(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	dir := t.TempDir()
	_, err := Start(ctx, binary, Options{Logger: testLogger(t), Dir: dir})
	require.ErrorIs(t, err, context.Canceled)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing was started")
}
