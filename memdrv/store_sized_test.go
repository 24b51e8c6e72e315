package memdrv

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

func TestSizedStoreTakesItsCapacityUpFront(t *testing.T) {
	_, err := NewSizedStore(0)
	require.Error(t, err)
	s, err := NewSizedStore(1 << 20)
	require.NoError(t, err)
	assert.Positive(t, s.Prefault())
	assert.Zero(t, NewStore().Prefault())

	w, st := s.reserve("a", 600<<10)
	require.Equal(t, contract.Pending, st)
	require.Len(t, w.buf, 600<<10, "the put copies into the arena")
	_, st = s.reserve("b", 600<<10)
	assert.Equal(t, contract.Declined, st, "beyond the capacity")
	copy(w.buf, bytes.Repeat([]byte{1}, len(w.buf)))
	require.True(t, s.commit(w, w.buf))
	obj, ok := s.Object("a")
	require.True(t, ok)
	assert.Equal(t, bytes.Repeat([]byte{1}, 600<<10), obj)
}

// A dropped object's memory is reused only once no get reads it: a get
// that took the object before the Delete still reads its bytes.
func TestSizedStoreReusesMemoryOnlyOnceNoGetReadsIt(t *testing.T) {
	const size = 256 << 10
	s, err := NewSizedStore(size)
	require.NoError(t, err)
	s.Set("old", bytes.Repeat([]byte{7}, size))
	held, obj, st := s.lookup("old")
	require.Equal(t, contract.Ready, st)

	s.Delete("old")
	_, st = s.reserve("new", size)
	assert.Equal(t, contract.Declined, st, "the only block is still being read")
	assert.Equal(t, bytes.Repeat([]byte{7}, size), obj, "and keeps its bytes")

	s.done(held)
	w, st := s.reserve("new", size)
	require.Equal(t, contract.Pending, st)
	assert.Equal(t, unsafe.SliceData(obj), unsafe.SliceData(w.buf), "the block is reused once the get is done")
	s.abandon(w)
	w, st = s.reserve("again", size)
	require.Equal(t, contract.Pending, st, "an abandoned put gives its block back")
	s.abandon(w)
}

// Set and BeginWrite are never refused: beyond the capacity they keep
// their object on the heap.
func TestSizedStoreSetFallsBackToTheHeap(t *testing.T) {
	s, err := NewSizedStore(4096)
	require.NoError(t, err)
	s.Set("a", bytes.Repeat([]byte{1}, 4096))
	s.Set("b", bytes.Repeat([]byte{2}, 4096))
	finish := s.BeginWrite("c")
	finish(bytes.Repeat([]byte{3}, 10))
	for k, want := range map[string][]byte{"a": bytes.Repeat([]byte{1}, 4096), "b": bytes.Repeat([]byte{2}, 4096), "c": bytes.Repeat([]byte{3}, 10)} {
		got, ok := s.Object(k)
		require.True(t, ok, k)
		assert.Equal(t, want, got, k)
	}
	_, st := s.reserve("d", 4096)
	assert.Equal(t, contract.Declined, st, "heap objects count against the capacity too")
	s.Delete("b") // a heap object: nothing to give back
	s.Delete("c")
	s.Delete("a")
	_, st = s.reserve("d", 4096)
	assert.Equal(t, contract.Pending, st, "a's block came back")
}
