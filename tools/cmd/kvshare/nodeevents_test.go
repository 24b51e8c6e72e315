package main

import (
	"bufio"
	"context"
	"io"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/go-zeromq/zmq4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/patience"
)

// kvshare node --events publishes a Ready publish of an unscoped engine
// as a batch on the topic "unscoped", sequence 0, naming the embedded
// store's medium; an events flag without --events is refused.
func TestNodeCommandEvents(t *testing.T) {
	var errs syncBuffer
	assert.Equal(t, 2, nodeCmd(context.Background(), []string{"--socket", filepath.Join(t.TempDir(), "s"), "--events-replay", "tcp://127.0.0.1:0"}, io.Discard, &errs))
	assert.Contains(t, errs.String(), "--events-replay needs --events")

	socket := nodeSocket(t)
	r, w := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		defer w.Close()
		code <- nodeCmd(ctx, []string{"--socket", socket, "--capacity", "16MiB", "--events", "tcp://127.0.0.1:0"}, w, &errs)
	}()
	lines := make(chan string, 4)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	wctx, wcancel := patience.For(t).Context(context.Background())
	defer wcancel()
	next := func() string {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the node ended: %s", errs.String())
			return l
		case <-wctx.Done():
			t.Fatal("no line from the node")
		}
		return ""
	}
	assert.Contains(t, next(), "serving")
	m := regexp.MustCompile(`KV events at (tcp://\S+) \(replay none, medium kvshare:embedded\)`).FindStringSubmatch(next())
	require.NotNil(t, m, "the events line")

	sub := zmq4.NewSub(wctx)
	defer sub.Close()
	require.NoError(t, sub.Dial(m[1]))
	require.NoError(t, sub.SetOption(zmq4.OptionSubscribe, "unscoped"))
	c, err := nodeclient.Dial(wctx, socket, nodeclient.Options{Engine: "events"})
	require.NoError(t, err)
	lend, err := c.Lend(wctx, nodeclient.Geometry{SlotBytes: 64, SlotCount: 1, Regions: 1})
	require.NoError(t, err)
	a, err := lend.Publish(wctx, contract.View{Groups: []contract.Group{{Slots: []int32{0}, Names: [][]byte{[]byte("block-0")}}}}, nodeclient.TransferOptions{})
	require.NoError(t, err)
	out, err := a.Wait(wctx)
	require.NoError(t, err)
	require.Equal(t, []contract.RowStatus{contract.Ready}, out.Rows)
	<-a.Done()
	// The subscription may reach the node after the batch went out: a
	// batch on the PUB socket is not kept for a subscriber that came
	// later, so publish until one arrives (sequence numbers then say how
	// many it missed).
	got := make(chan zmq4.Msg, 1)
	go func() {
		msg, err := sub.Recv()
		if err == nil {
			got <- msg
		}
	}()
	var msg zmq4.Msg
	for i := 1; ; i++ {
		select {
		case msg = <-got:
		case <-wctx.Done():
			t.Fatal("no batch reached the subscriber")
		default:
			a, err := lend.Publish(wctx, contract.View{Groups: []contract.Group{{Slots: []int32{0}, Names: [][]byte{[]byte("block-0")}}}}, nodeclient.TransferOptions{})
			require.NoError(t, err)
			_, err = a.Wait(wctx)
			require.NoError(t, err)
			<-a.Done()
			continue
		}
		break
	}
	require.Len(t, msg.Frames, 3, "topic, sequence, batch")
	assert.Equal(t, "unscoped", string(msg.Frames[0]))
	assert.Len(t, msg.Frames[1], 8)
	assert.Contains(t, string(msg.Frames[2]), "BlockStored")
	assert.Contains(t, string(msg.Frames[2]), "kvshare:embedded")
	assert.Contains(t, string(msg.Frames[2]), "block-0")
	require.NoError(t, lend.Return(wctx))
	require.NoError(t, c.Close(wctx))
	cancel()
	require.True(t, patience.For(t).Wait(closedWhen(code)), "the node did not shut down")
	require.Equal(t, 0, <-code, "stderr: %s", errs.String())
}
