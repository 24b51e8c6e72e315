package nodeclient

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/nodewire"
)

// wireLog is a frameWriter that records what reaches the socket, in
// order: "id" for a whole frame (with "+fd" when it carried one),
// "part:id" for a try the socket took only part of, "rest" for the rest.
type wireLog struct {
	mu   sync.Mutex
	got  []string
	full bool // the socket takes nothing at once
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
	if w.full {
		w.add(fmt.Sprintf("part:%d", request))
		return []byte{1, 2, 3}, nil
	}
	w.add(fmt.Sprint(request))
	return nil, nil
}

func (w *wireLog) WriteFrame(request uint64, m nodewire.Message, fd int) error {
	if fd >= 0 {
		w.add(fmt.Sprintf("%d+fd", request))
	} else {
		w.add(fmt.Sprint(request))
	}
	return nil
}

func (w *wireLog) WriteRest(rest []byte) error {
	w.add("rest")
	return nil
}

// A submission posted to an idle outbox is on the wire when post
// returns, written by the poster: no writer goroutine runs here. A
// frame with an fd (a lend) always goes through the writer, and what
// is posted behind it waits its turn.
func TestOutboxWritesAtOnceWhenIdle(t *testing.T) {
	w := &wireLog{}
	o := newOutbox(w)
	var tried []bool
	o.post(frame{id: 1, m: &nodewire.Cancel{}, fd: -1, written: func(t bool) { tried = append(tried, t) }})
	flushed := make(chan struct{})
	o.post(frame{id: 2, m: &nodewire.Cancel{}, fd: -1, flushed: flushed})
	assert.Equal(t, []string{"1", "2"}, w.log())
	assert.Equal(t, []bool{true}, tried, "told as its write started")
	select {
	case <-flushed:
	default:
		t.Fatal("a frame written whole at once is flushed")
	}

	o.post(frame{id: 3, m: &nodewire.Lend{}, fd: 7})
	o.post(frame{id: 4, m: &nodewire.Cancel{}, fd: -1})
	assert.Equal(t, []string{"1", "2"}, w.log(), "the lend and what follows it wait for the writer")
	f, ok, err := o.next()
	require.True(t, ok)
	require.NoError(t, err)
	assert.Equal(t, uint64(3), f.id)
	o.done()
	f, ok, _ = o.next()
	require.True(t, ok)
	assert.Equal(t, uint64(4), f.id)
	o.done()
}

// What the socket did not take of a frame is the writer's first frame;
// the frame is flushed only once the rest is written.
func TestOutboxRestGoesFirst(t *testing.T) {
	w := &wireLog{full: true}
	o := newOutbox(w)
	flushed := make(chan struct{})
	o.post(frame{id: 1, m: &nodewire.Cancel{}, fd: -1, flushed: flushed})
	o.post(frame{id: 2, m: &nodewire.Cancel{}, fd: -1})
	f, ok, _ := o.next()
	require.True(t, ok)
	assert.Equal(t, []byte{1, 2, 3}, f.rest)
	assert.Equal(t, uint64(1), f.id)
	assert.Equal(t, flushed, f.flushed, "flushed once the rest is written")
	assert.Nil(t, f.written, "already told")
	o.done()
	f, _, _ = o.next()
	assert.Equal(t, uint64(2), f.id)
	assert.Nil(t, f.rest)
	o.done()
	o.stop()
	_, ok, err := o.next()
	assert.False(t, ok)
	assert.NoError(t, err)
}
