package events_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/go-zeromq/zmq4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/events"
	"github.com/kvshare/kvshare/patience"
)

// A subscriber that stops reading never holds the publisher: with its
// connection full (38 MB it never read), every batch is still encoded,
// kept for replay and handed to the PUB socket, whose bounded queue
// drops what the subscriber cannot take; no hook call is dropped.
func TestASlowSubscriberNeverHoldsThePublisher(t *testing.T) {
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	p := openPublisher(t, events.Config{HWM: 8})
	scope, digest := testScope(t, "")
	sub := zmq4.NewSub(ctx)
	defer sub.Close()
	require.NoError(t, sub.Dial(p.Endpoint()))
	require.NoError(t, sub.SetOption(zmq4.OptionSubscribe, ""))
	// Read until one batch arrives (the subscription reached the
	// publisher), then never again.
	got := make(chan struct{})
	go func() {
		if _, err := sub.Recv(); err == nil {
			close(got)
		}
	}()
	names := make([][]byte, 64)
	for i := range names {
		names[i] = bytes.Repeat([]byte{byte(i)}, 400)
	}
	for arrived := false; !arrived; {
		p.Stored(scope, digest, names)
		require.NoError(t, p.Flush(ctx))
		select {
		case <-got:
			arrived = true
		case <-ctx.Done():
			t.Fatal("no batch reached the subscriber")
		default:
		}
	}
	before := p.Stats()
	const calls = 1500 // 64 x 400 bytes each: 38 MB the subscriber never reads
	for range calls {
		p.Stored(scope, digest, names)
	}
	require.NoError(t, p.Flush(ctx), "the publisher went on past the subscriber that stopped reading")
	after := p.Stats()
	assert.Zero(t, after.Dropped, "no hook call dropped: %d fit the queue", calls)
	assert.Equal(t, before.Events+calls, after.Events, fmt.Sprintf("one BlockStored a call (%d before)", before.Events))
}
