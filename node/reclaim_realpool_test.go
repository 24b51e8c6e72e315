package node

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/mooncakedrv/pool/pooltest"
	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/patience"
)

// realStatusTimeout is MC_TCP_STATUS_TIMEOUT_SEC for the real-pool
// tests' Mooncake client: a transfer to a provider that stopped
// answering ends -800 (access Unprovable) after this long instead of
// Mooncake's 30 s.
const realStatusTimeout = 3 * time.Second

// realClientEnv sets, once for the process and before its first
// Mooncake client, what that client reads with getenv: its transfer
// engine bound to the pool's address, and the short status timeout.
var realClientEnv sync.Once

// realNode is a node over a Mooncake client of a real pool of its own
// (one provider), served at a socket as newFixture's is; the fixture's
// store and memdrv driver are nil. The cleanup shuts the node down,
// requires nothing kept, then drains and closes the driver (the pool
// stops after).
func realNode(t *testing.T) (*fixture, *mooncakedrv.Driver, *pool.Pool) {
	t.Helper()
	dir := pooltest.Dir(t)
	opts := pool.ForTests(dir)
	opts.ClientTTL = 60 * time.Second // the provider is frozen a few seconds: the master keeps its objects
	p := pooltest.Start(t, opts)
	realClientEnv.Do(func() {
		for name, value := range map[string]string{
			"MC_TCP_BIND_ADDRESS":       p.Host(),
			"MC_TCP_STATUS_TIMEOUT_SEC": strconv.Itoa(int(realStatusTimeout / time.Second)),
		} {
			require.NoError(t, os.Setenv(name, value))
		}
	})
	config := writeMooncakeStoreFile(t, dir, p, "kvshare-node-realpool")
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	drv, blob, err := mooncakedrv.Open(ctx, config, logger)
	require.NoError(t, err)

	sock, err := os.MkdirTemp("", "kvnode") // short: a socket path has a 108-byte cap
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(sock) })
	cfg := Config{Driver: drv, KeyPrefix: blob.KeyPrefix, Socket: filepath.Join(sock, "node.sock"), Logger: quiet(t)}
	n, err := New(cfg)
	require.NoError(t, err)
	l, err := Listen(cfg.Socket, n.cfg.Mode)
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- n.Serve(context.Background(), l) }()
	t.Cleanup(func() {
		ctx, cancel := patience.For(t).Context(context.Background())
		defer cancel()
		held := n.Shutdown(ctx)
		require.Empty(t, held, "the node kept memory at shutdown")
		require.ErrorIs(t, <-served, ErrShutDown)
		require.True(t, drv.Drain(ctx), "the driver drains")
		require.NoError(t, drv.Close())
	})
	return &fixture{t: t, node: n, path: cfg.Socket}, drv, p
}

// attemptsOf returns the attempts in flight of the attached engine
// named name.
func (f *fixture) attemptsOf(name string) []contract.Attempt {
	f.t.Helper()
	f.node.mu.Lock()
	defer f.node.mu.Unlock()
	for e := range f.node.engines {
		if e.nameOf() != name {
			continue
		}
		e.mu.Lock()
		var atts []contract.Attempt
		for _, t := range e.transfers {
			if t != nil {
				atts = append(atts, t.att)
			}
		}
		e.mu.Unlock()
		return atts
	}
	f.t.Fatalf("no engine %q attached", name)
	return nil
}

// TestRealReclaimAcrossEngines proves on a real Mooncake pool what the
// node's reclaim does for all its engines at once. Three engine
// processes lend; the only provider is frozen (SIGSTOP); two of them
// fetch a stored row, fetches that end -800 once the client's status
// frame times out, their access Unprovable; one of those engines is
// SIGKILLed, so the node keeps its lend mapped, counted held. One
// Node.Reclaim then wins back both lends' slots with ONE recycle of the
// client every engine shares (the driver counts one Recycle; each
// lend's own reclaim found its calls ended); a lookup arriving while it
// runs is refused Busy; the killed engine's lend is unmapped, and the
// attached engine's fetch quiesces. The killed engine's memory, fenced
// after the reclaim, is untouched once the provider runs again, and
// every engine still attached round-trips over the fresh client.
func TestRealReclaimAcrossEngines(t *testing.T) {
	f, drv, p := realNode(t)
	lend := engineLendBytes(t)

	by := f.startEngine("bystander")
	by.do("lend")
	by.do("round 0")
	victim := f.startEngine("victim")
	victim.do("lend")
	victim.do("publish stray 0 1")
	stuck := f.startEngine("stuck")
	stuck.do("lend")
	late, _ := f.attach("late")

	file := lendFile(t, victim.cmd.Process.Pid)
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(int(file.Fd()), &st))
	require.Equal(t, lend, st.Size)

	require.NoError(t, p.Freeze())
	frozen := time.Now()
	victim.do("submit fetch stray 1 6")
	stuck.do("submit fetch stray 1 7")
	atts := append(f.attemptsOf("victim"), f.attemptsOf("stuck")...)
	require.Len(t, atts, 2)
	for _, a := range atts {
		bound := patience.Bound{Span: realStatusTimeout + patience.Wait(), What: "a fetch from the frozen provider", Logf: t.Logf}
		require.True(t, bound.Wait(a.Known()), "no outcome from the frozen provider")
		out, _ := a.Outcome()
		require.Equal(t, []contract.RowStatus{contract.Fault}, out.Rows)
		require.False(t, a.Quiesced(), "a fetch the store gave up on quiesced")
	}
	answered := time.Since(frozen)

	require.NoError(t, victim.cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, victim.wait())
	s := f.waitNode("the killed engine's lend kept", func(s Stats) bool { return s.Engines == 3 && s.HeldLends == 1 })
	require.Equal(t, lend, s.HeldBytes)
	require.Equal(t, 1, inodeMappings(t, st.Ino), "the node keeps the killed engine's lend mapped")
	ds := drv.Stats()
	require.EqualValues(t, 2, ds.OpsUnprovable, "both fetches unprovable")
	require.Len(t, f.node.unprovableLends(), 2, "two lends, of two engines, hold unprovable calls")

	f.node.gateClosed = func() {
		late.expectRefused(late.send(&nodewire.Lookup{Groups: [][][]byte{{[]byte("stray/0")}}}), nodewire.CodeBusy, "lookup")
	}
	ctx, cancel := patience.Bound{Span: 60*time.Second + patience.Wait(), What: "the reclaim", Logf: t.Logf}.Context(context.Background())
	defer cancel()
	start := time.Now()
	got, err := f.node.Reclaim(ctx)
	took := time.Since(start)
	require.NoError(t, err)
	assert.EqualValues(t, 2*engineGeometry.SlotBytes, got, "both fetches' slots given back")
	ds = drv.Stats()
	assert.EqualValues(t, 1, ds.Recycles, "one recycle of the client for both lends")
	assert.Zero(t, ds.OpsUnprovable)
	for _, a := range atts {
		require.True(t, patience.For(t).Wait(a.Done()), "an attempt reclaimed quiesces")
	}
	s = f.waitNode("the killed engine's lend unmapped", func(s Stats) bool { return s.HeldLends == 0 && s.Lends == 2 })
	require.Zero(t, inodeMappings(t, st.Ino))
	assert.EqualValues(t, 1, s.Reclaims)
	assert.EqualValues(t, 2*engineGeometry.SlotBytes, s.BytesReclaimed)
	assert.EqualValues(t, 1, s.ReclaimRefused)
	assert.Zero(t, s.AttemptsOpen)

	// The killed engine's memory is nobody's now: fence it, let the
	// provider go on, and watch a while (twice the status timeout: the
	// stale transfer, were it alive, would have answered by then).
	fence := bytes.Repeat([]byte{0xA5}, int(lend))
	_, err = file.WriteAt(fence, 0)
	require.NoError(t, err)
	require.NoError(t, p.Resume())
	by.do("round 1")
	stuck.do("round 1")
	time.Sleep(2 * realStatusTimeout) // an observation window, not a wait for anything
	after := make([]byte, lend)
	_, err = file.ReadAt(after, 0)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(fence, after), "the killed engine's memory changed after the reclaim gave it back")
	t.Logf("frozen provider: -800 after %v; reclaim of %d lends (%d bytes) with one recycle took %v",
		answered.Round(time.Millisecond), 2, got, took.Round(time.Millisecond))

	for _, e := range []*engineProc{by, stuck} {
		e.do("close")
		require.NoError(t, e.wait())
	}
	late.send(&nodewire.ClientGoodbye{Reason: "done"})
	late.expectEnd()
}
