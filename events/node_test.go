package events_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/events"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/node"
	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/patience"
)

// The node's Events hook is the publisher: node must not import events.
var _ node.Events = (*events.Publisher)(nil)

// engineRig is a node over drv telling ev (nil: no one), and one
// engine attached under scope with a lend of 2 regions of 8 slots of
// slotBytes.
type engineRig struct {
	c    *nodeclient.Client
	lend *nodeclient.Lend
}

func startNode(t testing.TB, ctx context.Context, drv contract.Driver, ev node.Events, scope keys.Scope, slotBytes int64) engineRig {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "node.sock")
	n, err := node.New(node.Config{Driver: drv, Socket: sock, Events: ev})
	require.NoError(t, err)
	l, err := node.Listen(sock, 0o600)
	require.NoError(t, err)
	served := make(chan struct{})
	go func() { defer close(served); _ = n.Serve(ctx, l) }()
	c, err := nodeclient.Dial(ctx, sock, nodeclient.Options{Engine: "events-test", Scope: scope})
	require.NoError(t, err)
	lend, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: slotBytes, SlotCount: 8, Regions: 2})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := patience.For(t).Context(context.Background())
		defer cancel()
		assert.NoError(t, lend.Return(ctx))
		assert.NoError(t, c.Close(ctx))
		assert.Empty(t, n.Shutdown(ctx), "held at shutdown")
		_ = l.Close()
		<-served
	})
	return engineRig{c: c, lend: lend}
}

// publish publishes names from region 0's first slots and returns once
// the attempt quiesced, with each row's status.
func (r engineRig) publish(t *testing.T, ctx context.Context, names ...string) []contract.RowStatus {
	t.Helper()
	for i, n := range names {
		copy(r.lend.Slot(0, i), n)
	}
	return r.transfer(t, ctx, r.lend.Publish, 0, names)
}

// fetch fetches names into region 1 and returns each row's status.
func (r engineRig) fetch(t *testing.T, ctx context.Context, names ...string) []contract.RowStatus {
	t.Helper()
	return r.transfer(t, ctx, r.lend.Fetch, 1, names)
}

// transfer runs a publish or fetch of names over region's first slots
// and returns each row's status once the attempt quiesced.
func (r engineRig) transfer(t *testing.T, ctx context.Context,
	submit func(context.Context, contract.View, nodeclient.TransferOptions) (*nodeclient.Attempt, error),
	region int, names []string) []contract.RowStatus {
	t.Helper()
	g := contract.Group{Region: region}
	for i, n := range names {
		g.Slots = append(g.Slots, int32(i))
		g.Names = append(g.Names, []byte(n))
	}
	a, err := submit(ctx, contract.View{Groups: []contract.Group{g}}, nodeclient.TransferOptions{})
	require.NoError(t, err)
	out, err := a.Wait(ctx)
	require.NoError(t, err)
	select {
	case <-a.Done():
	case <-ctx.Done():
		t.Fatalf("%v did not quiesce: %v", a, ctx.Err())
	}
	return out.Rows
}

func (r engineRig) lookup(t *testing.T, ctx context.Context, names ...string) []contract.Presence {
	t.Helper()
	g := contract.Group{}
	for _, n := range names {
		g.Names = append(g.Names, []byte(n))
	}
	found, err := r.c.Lookup(ctx, contract.View{Groups: []contract.Group{g}}, nodeclient.LookupOptions{Every: true})
	require.NoError(t, err)
	return found.Rows
}

// removedNames lists the block hashes of every BlockRemoved of batches.
func removedNames(batches []seenBatch) []string {
	var names []string
	for _, b := range batches {
		for _, ev := range b.Events {
			if ev.Type == "BlockRemoved" {
				names = append(names, ev.Hashes...)
			}
		}
	}
	return names
}

// Over the embedded store: the outside subscriber sees every Ready
// publish of a node's engine as BlockStored in order, the rows that did
// not end Ready not at all; it loses a live batch and gets it replayed;
// the blocks the store dropped are BlockRemoved once a lookup or a fetch
// finds them absent, and a name never announced is not.
func TestNodeEventsOverTheEmbeddedStore(t *testing.T) {
	py := subscriberPython(t)
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	store, err := memdrv.NewBoundedStore(memdrv.StoreOptions{Capacity: 1 << 20})
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	drv := memdrv.New(store, memdrv.Options{})
	t.Cleanup(func() { _ = drv.Close() }) // after the node's shutdown: cleanups run last first
	p := openPublisher(t, events.Config{Medium: "kvshare:memdrv"})
	scope, digest := testScope(t, "")
	rig := startNode(t, ctx, drv, p, scope, 64)
	stem, err := keys.NewScopedStem("kvshare", scope)
	require.NoError(t, err)

	var stored []string
	seq := uint64(0)
	publish := func(names ...string) uint64 {
		rows := rig.publish(t, ctx, names...)
		for i, s := range rows {
			if s == contract.Ready {
				stored = append(stored, names[i])
			}
		}
		require.NoError(t, p.Flush(ctx))
		seq++
		return seq - 1
	}
	publish("block-0", "block-1")
	sub := startSubscriber(t, ctx, py, p.Endpoint(), p.ReplayEndpoint(), digest.String(), true)
	for i := 0; !sub.until(t, ctx, publish(fmt.Sprintf("block-%d", 2+i))).live(); i++ {
	}
	publish("lost-live-0", "lost-live-1") // or the next, as in TestOutsideSubscriberReplaysWhatItMissed
	publish("after-the-loss")
	publish("after-the-gap")

	// The store drops two blocks; a lookup finds one absent, a fetch the
	// other; a name never published is absent too, and not announced.
	for _, n := range []string{"block-0", "block-1"} {
		key, err := stem.Key([]byte(n))
		require.NoError(t, err)
		store.Delete(key)
	}
	assert.Equal(t, []contract.Presence{contract.Absent, contract.Present, contract.Absent},
		rig.lookup(t, ctx, "block-0", "block-2", "never-stored"))
	require.NoError(t, p.Flush(ctx))
	seq++
	assert.Equal(t, []contract.RowStatus{contract.Miss}, rig.fetch(t, ctx, "block-1"))
	require.NoError(t, p.Flush(ctx))
	seq++
	got := sub.until(t, ctx, seq-1)

	replayedTheLoss(t, got)
	assert.Equal(t, hexNames(bytesOf(stored)...), storedNames(t, got.Batches), "every Ready row, in order")
	assert.Equal(t, hexNames([]byte("block-0"), []byte("block-1")), removedNames(got.Batches),
		"the dropped blocks, once found absent; never a name not announced")
	assert.Zero(t, p.Stats().Dropped)
}

func bytesOf(names []string) [][]byte {
	out := make([][]byte, len(names))
	for i, n := range names {
		out[i] = []byte(n)
	}
	return out
}
