package node

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/patience"
)

// wireLog is a frameWriter that records what reaches the socket, in
// order: the request of each whole frame, "rest:N" for a frame's rest.
// take decides how many bytes of a frame a try takes (-1: all).
type wireLog struct {
	mu      sync.Mutex
	got     []string
	take    func(request uint64) int
	fail    error
	entered chan struct{} // when set, told as WriteFrame starts, which then waits for release
	release chan struct{}
}

func (w *wireLog) add(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, s)
}

func (w *wireLog) log() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.got...)
}

func (w *wireLog) TryWriteFrame(request uint64, m nodewire.Message) ([]byte, error) {
	if w.fail != nil {
		return nil, w.fail
	}
	if w.take != nil {
		if n := w.take(request); n >= 0 {
			w.add(fmt.Sprintf("part:%d", request))
			return make([]byte, 10-n), nil
		}
	}
	w.add(fmt.Sprint(request))
	return nil, nil
}

func (w *wireLog) WriteFrame(request uint64, m nodewire.Message, fd int) error {
	if w.entered != nil {
		w.entered <- struct{}{}
		<-w.release
	}
	w.add(fmt.Sprint(request))
	return w.fail
}

func (w *wireLog) WriteRest(rest []byte) error {
	w.add(fmt.Sprintf("rest:%d", len(rest)))
	return w.fail
}

// An idle outbox writes a posted frame at once, on the poster's
// goroutine: no writer is running here, yet the frames are on the wire.
func TestOutboxWritesAtOnceWhenIdle(t *testing.T) {
	w := &wireLog{}
	o := newOutbox(4, w)
	for r := range uint64(3) {
		require.True(t, o.post(r+1, &nodewire.Accepted{}))
	}
	assert.Equal(t, []string{"1", "2", "3"}, w.log(), "written by the posters, in order")
	o.last(0, nil)
	require.NoError(t, o.run(), "a sealed, empty outbox: the writer has nothing to do")
}

// What the socket did not take of a frame goes before every frame
// posted after it; the writer writes them in order.
func TestOutboxWritesTheRestOfAFrameFirst(t *testing.T) {
	w := &wireLog{take: func(r uint64) int {
		if r == 1 {
			return 4 // the socket took 4 of 10 bytes
		}
		return -1
	}}
	o := newOutbox(4, w)
	require.True(t, o.post(1, &nodewire.Accepted{}))
	require.True(t, o.post(2, &nodewire.Quiesced{}), "queued behind the rest")
	require.True(t, o.last(3, &nodewire.Quiesced{}))
	require.NoError(t, o.run())
	assert.Equal(t, []string{"part:1", "rest:6", "2", "3"}, w.log())
}

// While the writer writes, posts queue behind it in order, and the
// goodbye posted last goes last.
func TestOutboxQueuesBehindAWriteUnderWay(t *testing.T) {
	w := &wireLog{take: func(r uint64) int {
		if r == 1 {
			return 0 // the socket is full: nothing taken
		}
		return -1
	}, entered: make(chan struct{}), release: make(chan struct{})}
	o := newOutbox(8, w)
	require.True(t, o.post(1, &nodewire.Accepted{}))
	require.True(t, o.post(2, &nodewire.Accepted{}))
	ran := make(chan struct{})
	var runErr error
	go func() { runErr = o.run(); close(ran) }()
	// The writer writes the rest of 1, then starts on 2 and waits there.
	bound := patience.Bound{Span: patience.Wait(), What: "the writer starts on frame 2", Logf: t.Logf}
	require.True(t, bound.Wait(w.entered))
	require.True(t, o.post(3, &nodewire.Accepted{}), "a write is under way: queued")
	require.True(t, o.last(0, &nodewire.NodeGoodbye{}))
	assert.False(t, o.post(4, &nodewire.Accepted{}), "sealed: dropped")
	w.release <- struct{}{} // frame 2
	require.True(t, bound.Wait(w.entered))
	w.release <- struct{}{} // frame 3
	require.True(t, bound.Wait(w.entered))
	w.release <- struct{}{} // the goodbye
	require.True(t, bound.Wait(ran))
	require.NoError(t, runErr)
	assert.Equal(t, []string{"part:1", "rest:10", "2", "3", "0"}, w.log())
}

// A queue that fills marks the engine a slow reader and seals the
// outbox; what was queued is still written.
func TestOutboxFullMeansASlowReader(t *testing.T) {
	w := &wireLog{take: func(uint64) int { return 0 }}
	o := newOutbox(2, w)
	require.True(t, o.post(1, &nodewire.Accepted{}), "tried at once: the socket took nothing, the rest is queued")
	require.True(t, o.post(2, &nodewire.Accepted{}))
	assert.False(t, o.post(3, &nodewire.Accepted{}), "the queue of 2 is full")
	assert.True(t, o.slow())
	assert.False(t, o.post(4, &nodewire.Accepted{}), "sealed")
	require.NoError(t, o.run())
	assert.Equal(t, []string{"part:1", "rest:10", "2"}, w.log())
}

// A failed write, the poster's or the writer's, drops the rest and is
// what the writer returns.
func TestOutboxFailedWriteEndsIt(t *testing.T) {
	broken := errors.New("broken pipe")
	w := &wireLog{fail: broken}
	o := newOutbox(4, w)
	assert.False(t, o.post(1, &nodewire.Accepted{}), "the poster's write failed")
	assert.False(t, o.post(2, &nodewire.Accepted{}), "dropped after the failure")
	assert.ErrorIs(t, o.run(), broken)
	assert.Empty(t, w.log())
}
