package events_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/events"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/mooncakedrv/pool/pooltest"
	"github.com/kvshare/kvshare/patience"
)

// Over a real Mooncake pool (the real-pool tier: KVSHARE_MOONCAKE_DIR;
// unset, it skips): the outside subscriber sees every Ready publish of
// the node's engine as BlockStored in order, naming the pool's medium;
// it loses a live batch and gets it from the replay socket; a fetch of a
// name never published is no BlockRemoved.
func TestNodeEventsOverTheRealPool(t *testing.T) {
	py := subscriberPython(t)
	dir := pooltest.Dir(t)
	p := pooltest.Start(t, pool.ForTests(dir))
	t.Setenv("MC_TCP_BIND_ADDRESS", p.Host()) // read by the client this process opens
	sum, err := pool.LibrarySHA256(dir)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "store.toml")
	require.NoError(t, os.WriteFile(file, fmt.Appendf(nil, "[blob]\nkey_prefix = \"kvshare\"\n\n[mooncake]\nlibrary = %s\nsdk_sha256 = [%s]\nmaster = %s\nmetadata_server = %s\nprotocol = \"tcp\"\nlocal_hostname = %s\nglobal_segment_size = 0\nlocal_buffer_size = %d\n",
		strconv.Quote(filepath.Join(dir, pool.Library)), strconv.Quote(sum), strconv.Quote(p.MasterAddress()),
		strconv.Quote(p.MetadataURL()), strconv.Quote(p.Host()), 64<<20), 0o644))
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	drv, _, err := mooncakedrv.Open(ctx, file, slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})))
	require.NoError(t, err)
	t.Cleanup(func() { // after the node's shutdown: cleanups run last first
		ctx, cancel := patience.For(t).Context(context.Background())
		defer cancel()
		assert.True(t, drv.Drain(ctx), "the driver drains")
		assert.NoError(t, drv.Close())
	})
	pub := openPublisher(t, events.Config{Medium: "kvshare:mooncake"})
	scope, digest := testScope(t, "")
	rig := startNode(t, ctx, drv, pub, scope, 4096)

	var stored []string
	seq := uint64(0)
	publish := func(names ...string) uint64 {
		for i, s := range rig.publish(t, ctx, names...) {
			require.Equal(t, contract.Ready, s, "row %s", names[i])
		}
		stored = append(stored, names...)
		require.NoError(t, pub.Flush(ctx))
		seq++
		return seq - 1
	}
	publish("block-0", "block-1")
	sub := startSubscriber(t, ctx, py, pub.Endpoint(), pub.ReplayEndpoint(), digest.String(), true)
	for i := 0; !sub.until(t, ctx, publish(fmt.Sprintf("block-%d", 2+i))).live(); i++ {
	}
	publish("lost-live")
	publish("after-the-loss")
	publish("after-the-gap")
	assert.Equal(t, []contract.RowStatus{contract.Miss}, rig.fetch(t, ctx, "never-published"))
	require.NoError(t, pub.Flush(ctx))
	last := publish("last")
	got := sub.until(t, ctx, last)

	replayedTheLoss(t, got)
	assert.Equal(t, hexNames(bytesOf(stored)...), storedNames(t, got.Batches), "every Ready row, in order")
	assert.Empty(t, removedNames(got.Batches), "a name never announced is never removed")
	for _, b := range got.Batches {
		for _, ev := range b.Events {
			if ev.Type == "BlockStored" {
				require.NotNil(t, ev.Medium)
				assert.Equal(t, "kvshare:mooncake", *ev.Medium)
			}
		}
	}
}
