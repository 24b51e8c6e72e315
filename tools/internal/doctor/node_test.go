package doctor

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/node"
	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/patience"
)

// shortDir is a directory whose paths fit a Unix socket's address.
func shortDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "kvdoc")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startNode serves a node over the embedded store at a socket of mode,
// allowing uids (nil: this user), until the test ends.
func startNode(t *testing.T, mode os.FileMode, uids []uint32) (string, *node.Node) {
	t.Helper()
	return startNodeWith(t, mode, func(c *node.Config) { c.AllowUIDs = uids })
}

// startNodeWith is startNode with a config shape changes.
func startNodeWith(t *testing.T, mode os.FileMode, shape func(*node.Config)) (string, *node.Node) {
	t.Helper()
	store, err := memdrv.NewBoundedStore(memdrv.StoreOptions{Capacity: 1 << 20})
	require.NoError(t, err)
	drv := memdrv.New(store, memdrv.Options{Logger: slog.New(slog.DiscardHandler)})
	socket := filepath.Join(shortDir(t), "node.sock")
	cfg := node.Config{Driver: drv, Socket: socket, MaxRows: 512, Logger: slog.New(slog.DiscardHandler)}
	shape(&cfg)
	n, err := node.New(cfg)
	require.NoError(t, err)
	l, err := node.Listen(socket, mode)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { defer close(served); _ = n.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		sctx, stop := patience.For(t).Context(context.Background())
		defer stop()
		assert.Empty(t, n.Shutdown(sctx))
		<-served
		assert.True(t, drv.Drain(sctx))
		assert.NoError(t, drv.Close())
		assert.NoError(t, store.Close())
	})
	return socket, n
}

func runNode(t *testing.T, socket string) Report {
	t.Helper()
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	return RunNode(ctx, socket, patience.Wait())
}

func TestNodeEveryCheckPasses(t *testing.T) {
	socket, n := startNode(t, 0o660, nil)
	rep := runNode(t, socket)
	require.False(t, rep.Failed(), "%+v", rep.Findings)
	for _, c := range nodeChecks {
		f, found := rep.Find(c)
		require.True(t, found, c)
		assert.Equal(t, OK, f.Verdict, "%s: %s", c, f.Detail)
	}
	f, _ := rep.Find(CheckNodeSocket)
	assert.Contains(t, f.Detail, fmt.Sprintf("mode 0660, owner uid %d", os.Getuid()))
	f, _ = rep.Find(CheckNodeWelcome)
	assert.Contains(t, f.Detail, fmt.Sprintf("protocol version %d, node pid %d", nodewire.Version, os.Getpid()))
	assert.Contains(t, f.Detail, "512 rows per request", "the node's own limit")
	f, _ = rep.Find(CheckNodeStats)
	assert.Contains(t, f.Detail, "1 engines attached (this one included)")
	f, _ = rep.Find(CheckNodeLookup)
	assert.Contains(t, f.Detail, "absent")
	assert.EqualValues(t, 1, n.Stats().Lookups, "the doctor's lookup reached the node")
	assert.EqualValues(t, 1, n.Stats().Attached)
}

func TestNodeSocketOpenToEveryoneWarns(t *testing.T) {
	socket, _ := startNode(t, 0o666, nil)
	rep := runNode(t, socket)
	require.False(t, rep.Failed())
	f, _ := rep.Find(CheckNodeSocket)
	assert.Equal(t, Warn, f.Verdict)
	assert.Contains(t, f.Detail, "every user may connect")
}

func TestNodeNoSocket(t *testing.T) {
	socket := filepath.Join(shortDir(t), "node.sock")
	rep := runNode(t, socket)
	require.True(t, rep.Failed())
	f, _ := rep.Find(CheckNodeSocket)
	assert.Equal(t, Fail, f.Verdict)
	assert.Contains(t, f.Detail, "no such file: is the node running")
	f, _ = rep.Find(CheckNodeLookup)
	assert.Equal(t, Skip, f.Verdict)

	notSocket := filepath.Join(shortDir(t), "plain")
	require.NoError(t, os.WriteFile(notSocket, nil, 0o600))
	f, _ = runNode(t, notSocket).Find(CheckNodeSocket)
	assert.Equal(t, Fail, f.Verdict)
	assert.Contains(t, f.Detail, "is not a socket")
}

func TestNodeStaleSocket(t *testing.T) {
	socket := filepath.Join(shortDir(t), "node.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: socket, Net: "unix"})
	require.NoError(t, err)
	l.SetUnlinkOnClose(false)
	require.NoError(t, l.Close())
	rep := runNode(t, socket)
	f, _ := rep.Find(CheckNodeAttach)
	assert.Equal(t, Fail, f.Verdict)
	assert.Contains(t, f.Detail, "nothing listens at "+socket)
}

func TestNodeRefusesThisUser(t *testing.T) {
	socket, n := startNode(t, 0o600, []uint32{uint32(os.Getuid()) + 1})
	rep := runNode(t, socket)
	require.True(t, rep.Failed())
	f, _ := rep.Find(CheckNodeAttach)
	assert.Equal(t, Fail, f.Verdict)
	assert.Contains(t, f.Detail, fmt.Sprintf("the node refused this user (uid %d): add it to the node's allowed uids", os.Getuid()))
	f, _ = rep.Find(CheckNodeStats)
	assert.Equal(t, Skip, f.Verdict)
	assert.NotZero(t, n.Stats().PeersRefused, "the node counted the refusal")
}

// A node that serves scoped engines only refuses the doctor's hello,
// which declares no scope: said plainly, the rest skipped.
func TestNodeRequiresAScope(t *testing.T) {
	socket, n := startNodeWith(t, 0o600, func(c *node.Config) { c.RequireScope = true })
	rep := runNode(t, socket)
	require.True(t, rep.Failed())
	f, _ := rep.Find(CheckNodeAttach)
	assert.Equal(t, Fail, f.Verdict)
	assert.Contains(t, f.Detail, "the node serves only engines that declare a scope (--require-scope, [node] require_scope)")
	f, _ = rep.Find(CheckNodeLookup)
	assert.Equal(t, Skip, f.Verdict)
	assert.EqualValues(t, 1, n.Stats().Refusals[nodewire.CodeScopeUnsupported], "the node counted the refusal")
}

// A node speaking another version: a listener of the test's own that
// welcomes with version+1.
func TestNodeOfAnotherVersion(t *testing.T) {
	socket := filepath.Join(shortDir(t), "node.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: socket, Net: "unix"})
	require.NoError(t, err)
	defer l.Close()
	go func() {
		c, err := l.AcceptUnix()
		if err != nil {
			return
		}
		defer c.Close()
		w := nodewire.NewConn(c)
		h, _, _, err := w.ReadFrame(1 << 20)
		if err != nil {
			return
		}
		_ = w.WriteFrame(h.Request, &nodewire.Welcome{Version: nodewire.Version + 1, NodePID: 1, MaxFrame: 1 << 20, MaxAttempts: 1, MaxRows: 1, MaxLendBytes: 1}, -1)
		_, _, _, _ = w.ReadFrame(1 << 20) // until the doctor hangs up
	}()
	rep := runNode(t, socket)
	f, _ := rep.Find(CheckNodeAttach)
	assert.Equal(t, Fail, f.Verdict)
	assert.Contains(t, f.Detail, fmt.Sprintf("the node speaks another protocol version than this doctor (%d)", nodewire.Version))
}
