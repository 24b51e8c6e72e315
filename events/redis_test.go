package events_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/events"
	"github.com/kvshare/kvshare/patience"
	"github.com/kvshare/kvshare/redisdrv"
	"github.com/kvshare/kvshare/redisdrv/redistest"
)

// Over Redis (the Redis tier: KVSHARE_REDIS_SERVER names redis-server;
// unset, it skips): a server under maxmemory evicts the node's blocks
// as more are published, its keyspace notifications say so, and the
// outside subscriber sees BlockRemoved for blocks it saw stored, each
// once, and gone from the store; every Ready publish is BlockStored, in
// order.
func TestNodeEventsOverRedis(t *testing.T) {
	py := subscriberPython(t)
	srv := redistest.StartForTest(t, redistest.Options{MaxMemory: 4 << 20, Policy: "allkeys-lru",
		Extra: [][2]string{{"notify-keyspace-events", "Egex"}}})
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	sc, err := redisdrv.ParseStoreConfig("redis.toml", fmt.Appendf(nil, "[blob]\nkey_prefix = \"kvshare\"\n[redis]\naddress = %q\n", srv.Addr()))
	require.NoError(t, err)
	drv, err := redisdrv.OpenConfig(ctx, sc, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = drv.Close() }) // after the node's shutdown: cleanups run last first
	p := openPublisher(t, events.Config{Medium: "kvshare:redis"})
	opt, err := sc.ClientOption()
	require.NoError(t, err)
	client, err := rueidis.NewClient(opt)
	require.NoError(t, err)
	defer client.Close()
	kctx, stop := context.WithCancel(ctx)
	followed := make(chan error, 1)
	go func() { followed <- events.KeyspaceEvictions(kctx, client, p) }()
	defer func() {
		stop()
		assert.ErrorIs(t, <-followed, context.Canceled)
	}()

	scope, digest := testScope(t, "")
	rig := startNode(t, ctx, drv, p, scope, 64<<10)
	sub := startSubscriber(t, ctx, py, p.Endpoint(), p.ReplayEndpoint(), digest.String(), false)
	var stored []string
	for i := range 64 { // 512 KiB a publish, 32 MiB in all: within 4 MiB, the server evicts
		names := make([]string, 8)
		for j := range names {
			names[j] = fmt.Sprintf("block-%d-%d", i, j)
		}
		for j, s := range rig.publish(t, ctx, names...) {
			if s == contract.Ready {
				stored = append(stored, names[j])
			}
		}
		require.NoError(t, p.Flush(ctx))
	}
	removedAny := func(seen subscription) bool { return len(removedNames(seen.Batches)) > 0 }
	got := sub.untilSeen(t, ctx, removedAny)
	removed := removedNames(got.Batches)
	storedSeen := map[string]bool{}
	for _, n := range storedNames(t, got.Batches) {
		storedSeen[n] = true
	}
	once := map[string]bool{}
	var names []string
	for _, h := range removed {
		assert.True(t, storedSeen[h], "block %s removed was seen stored first", h)
		assert.False(t, once[h], "block %s removed once", h)
		once[h] = true
		n, err := hex.DecodeString(h)
		require.NoError(t, err)
		names = append(names, string(n))
	}
	for i, pres := range rig.lookup(t, ctx, names...) {
		assert.Equal(t, contract.Absent, pres, "block %s, removed, is gone from the store", names[i])
	}
	assert.Equal(t, hexNames(bytesOf(stored[:len(storedNames(t, got.Batches))])...), storedNames(t, got.Batches), "every Ready row, in order")
	t.Logf("%d blocks stored, %d evicted and removed", len(stored), len(removed))
}
