package node

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/memdrv"
)

// TestConfigRefused: New refuses a config it cannot serve, naming the
// field.
func TestConfigRefused(t *testing.T) {
	drv := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	for _, c := range []struct {
		cfg   Config
		field string
	}{
		{Config{}, "Driver"},
		{Config{Driver: drv, KeyPrefix: "bad prefix"}, "KeyPrefix"},
		{Config{Driver: drv, MaxAttempts: -1}, "MaxAttempts"},
		{Config{Driver: drv, MaxLendBytes: -1}, "MaxLendBytes"},
		{Config{Driver: drv, OutQueue: -1}, "OutQueue"},
		{Config{Driver: drv, EngineWait: -1}, "EngineWait"},
		{Config{Driver: drv, ReclaimAbove: -1}, "ReclaimAbove"},
		{Config{Driver: drv, ReclaimWait: -1}, "ReclaimWait"},
		{Config{Driver: drv, MaxFrame: 100}, "MaxFrame"},
		{Config{Driver: drv, Mode: os.ModeSetuid | 0o600}, "Mode"},
	} {
		_, err := New(c.cfg)
		require.ErrorIs(t, err, ErrConfig, c.field)
		require.ErrorContains(t, err, c.field)
	}
	n, err := New(Config{Driver: drv})
	require.NoError(t, err)
	require.Equal(t, []uint32{uint32(os.Getuid())}, n.cfg.AllowUIDs, "no allow-list: the node's own user")
	require.Equal(t, DefaultMode, n.cfg.Mode)
}

// TestListen: the socket has the mode asked from its first moment; a
// stale socket (nobody listening) is replaced, a live one and a file
// that is no socket are refused; ListenAndServe removes its socket when
// it returns.
func TestListen(t *testing.T) {
	dir, err := os.MkdirTemp("", "kvlisten")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "node.sock")

	l, err := Listen(path, 0o660)
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.ModeSocket|0o660, fi.Mode())
	_, err = Listen(path, 0o600)
	require.ErrorContains(t, err, "another process listens on it")
	require.NoError(t, l.Close()) // leaves the file: a stale socket
	l, err = Listen(path, 0o600)
	require.NoError(t, err, "a stale socket is replaced")
	require.NoError(t, l.Close())

	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = Listen(file, 0o600)
	require.ErrorContains(t, err, "not a socket")

	n, err := New(Config{Driver: memdrv.New(memdrv.NewStore(), memdrv.Options{}), Socket: path, Logger: quiet(t)})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // serve nothing: make the socket, stop at once, remove it
	require.ErrorIs(t, n.ListenAndServe(ctx), context.Canceled)
	_, err = os.Lstat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "ListenAndServe removes its socket")
	require.Empty(t, n.Shutdown(context.Background()))
	require.ErrorIs(t, n.ListenAndServe(context.Background()), ErrShutDown, "after Shutdown")
}
