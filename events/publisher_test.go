package events_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/events"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/patience"
)

// testScope is a scope as an engine would declare it.
func testScope(t testing.TB, adapter string) (keys.Scope, keys.ScopeDigest) {
	t.Helper()
	s := keys.Scope{Model: "meta-llama/Llama-3.1-8B-Instruct", Revision: "0e9e39f", Adapter: adapter, KVDType: "bf16",
		TokensPerBlock: 16, KVHeads: 8, HeadDim: 128, Layers: 32, TPSize: 1, PPSize: 1, HashAlgorithm: "sha256-cbor"}
	d, err := s.Digest()
	require.NoError(t, err)
	return s, d
}

func openPublisher(t *testing.T, cfg events.Config) *events.Publisher {
	t.Helper()
	if cfg.Endpoint == "" {
		cfg.Endpoint = "tcp://127.0.0.1:0"
	}
	if cfg.ReplayEndpoint == "" {
		cfg.ReplayEndpoint = "tcp://127.0.0.1:0"
	}
	p, err := events.Open(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// The outside subscriber, started after two batches went out and made to
// lose a live one, sees every Stored call as BlockStored in order, in
// vLLM's layout: the late start and the loss are gaps it fills from the
// replay socket.
func TestOutsideSubscriberReplaysWhatItMissed(t *testing.T) {
	py := subscriberPython(t)
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	p := openPublisher(t, events.Config{Medium: "kvshare:test", DataParallelRank: 2})
	scope, digest := testScope(t, "sql-lora")
	var want [][]byte
	seq := uint64(0)
	store := func(names ...string) uint64 {
		var b [][]byte
		for _, n := range names {
			b = append(b, []byte(n))
		}
		want = append(want, b...)
		p.Stored(scope, digest, b)
		require.NoError(t, p.Flush(ctx))
		seq++
		return seq - 1
	}
	store("block-0", "block-1") // with AllBlocksCleared first
	store("block-2")
	sub := startSubscriber(t, ctx, py, p.Endpoint(), p.ReplayEndpoint(), digest.String(), true)
	// Until a batch arrives live, its subscription has not reached the
	// publisher: what it missed comes from the replay socket.
	for i := 0; !sub.until(t, ctx, store(fmt.Sprintf("block-%d", 3+i))).live(); i++ {
	}
	// The next live batch it would take is lost (this one, or the next
	// should the replay socket have given it this one first): the one
	// after shows the gap.
	store("lost-live")
	store("after-the-loss")
	last := store("after-the-gap")
	got := sub.until(t, ctx, last)

	replayedTheLoss(t, got)
	assert.Equal(t, "replay", got.Batches[0].How, "so did those sent before it started")
	require.Len(t, got.Batches, int(last)+1)
	assert.Equal(t, hexNames(want...), storedNames(t, got.Batches), "every stored name, in order")
	first := got.Batches[0].Events
	require.Len(t, first, 2)
	assert.Equal(t, "AllBlocksCleared", first[0].Type, "a topic's first batch clears what a router believed before")
	ev := first[1]
	assert.Equal(t, "BlockStored", ev.Type)
	assert.Equal(t, int64(16), ev.BlockSize, "the block size is the scope's tokens per block")
	assert.Nil(t, ev.Parent, "the node does not know the parent")
	assert.Empty(t, ev.TokenIDs, "nor the tokens")
	require.NotNil(t, ev.Medium)
	assert.Equal(t, "kvshare:test", *ev.Medium)
	require.NotNil(t, ev.LoraName)
	assert.Equal(t, "sql-lora", *ev.LoraName)
	require.NotNil(t, got.Batches[0].Rank)
	assert.Equal(t, int64(2), *got.Batches[0].Rank)
}
