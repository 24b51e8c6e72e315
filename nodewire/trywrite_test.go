package nodewire

import (
	"bytes"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// TryWriteFrame never waits: on a socket whose peer reads nothing it
// takes what fits and hands back the rest; WriteRest then sends the rest
// once the peer reads, and every frame arrives whole, in order.
func TestTryWriteFrameHandsBackWhatTheSocketDidNotTake(t *testing.T) {
	a, b := socketPair(t)
	w, r := NewConn(a), NewConn(b)
	big := &Outcome{Rows: make([]contract.RowStatus, 60_000)} // larger than the socket's buffer
	var sent []uint64
	var rest []byte
	for id := uint64(1); rest == nil; id++ {
		var err error
		rest, err = w.TryWriteFrame(id, big)
		require.NoError(t, err)
		sent = append(sent, id)
		require.Less(t, id, uint64(1000), "the socket never filled")
	}
	whole := frameOf(t, sent[len(sent)-1], big)
	assert.True(t, bytes.HasSuffix(whole, rest), "the rest is the end of the frame")
	assert.NotEmpty(t, rest)

	var wg sync.WaitGroup
	wg.Go(func() {
		assert.NoError(t, w.WriteRest(rest))
		assert.NoError(t, w.WriteFrame(9999, &Quiesced{}, -1))
	})
	for _, id := range append(sent, 9999) {
		h, m, fd, err := r.ReadFrame(1 << 20)
		require.NoError(t, err)
		assert.Equal(t, -1, fd)
		assert.Equal(t, id, h.Request)
		if id != 9999 {
			assert.Equal(t, big, m)
		}
	}
	wg.Wait()
}

// TryWriteFrame refuses a message that carries an fd, and reports a
// broken socket.
func TestTryWriteFrameRefuses(t *testing.T) {
	a, b := socketPair(t)
	w := NewConn(a)
	_, err := w.TryWriteFrame(1, &Lend{SlotBytes: 1, SlotCount: 1, Regions: 1})
	assert.EqualError(t, err, "nodewire: write lend: no fd")
	require.NoError(t, b.Close())
	_, err = w.TryWriteFrame(2, &Quiesced{})
	assert.ErrorContains(t, err, "nodewire: write quiesced")
}
