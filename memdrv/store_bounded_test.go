package memdrv

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
)

// boundedStore is a bounded store of chunks chunks of chunk bytes,
// closed when the test ends (which must succeed: nothing reads or
// writes by then).
func boundedStore(t *testing.T, chunks, chunk int64) *Store {
	t.Helper()
	s, err := NewBoundedStore(StoreOptions{Capacity: chunks * chunk, ChunkBytes: chunk})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// bytesOf is an object of n bytes whose content tells seed apart.
func bytesOf(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

// putObject runs a driver's put of data under key, as a worker does.
func putObject(t *testing.T, s *Store, key string, data []byte) contract.RowStatus {
	t.Helper()
	w, st := s.reserve(key, int64(len(data)))
	if w == nil {
		return st
	}
	if !w.obj.inChunks() {
		w.obj.heap = make([]byte, len(data))
	}
	w.obj.fillFrom(data)
	require.True(t, s.commit(w))
	return contract.Ready
}

func TestStoreOptionsRefusedNameTheField(t *testing.T) {
	for _, tc := range []struct {
		name  string
		o     StoreOptions
		field string
	}{
		{"negative capacity", StoreOptions{Capacity: -1}, "Capacity is -1"},
		{"chunk not a multiple of 64", StoreOptions{Capacity: 1 << 20, ChunkBytes: 100}, "ChunkBytes is 100"},
		{"chunk below 64", StoreOptions{Capacity: 1 << 20, ChunkBytes: 32}, "ChunkBytes is 32"},
		{"negative chunk", StoreOptions{Capacity: 1 << 20, ChunkBytes: -64}, "ChunkBytes is -64"},
		{"chunk beyond 1 GiB", StoreOptions{Capacity: 4 << 30, ChunkBytes: 2 << 30}, "ChunkBytes is 2147483648"},
		{"capacity below a chunk", StoreOptions{Capacity: 1000}, "Capacity 1000 holds no chunk of 65536 bytes"},
		{"too many chunks", StoreOptions{Capacity: 64 * (MaxChunks + 1), ChunkBytes: 64}, "want at most 2147483647"},
		{"unknown page size", StoreOptions{Capacity: 1 << 20, HugePages: hostmem.HugePages1GiB + 1}, "HugePages is 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewBoundedStore(tc.o)
			require.ErrorIs(t, err, ErrStoreOptions)
			assert.Contains(t, err.Error(), tc.field)
			assert.Nil(t, s)
		})
	}
}

func TestBoundedStoreTakesItsCapacityUpFront(t *testing.T) {
	s, err := NewBoundedStore(StoreOptions{Capacity: 1<<20 + 5})
	require.NoError(t, err)
	st := s.Stats()
	assert.Equal(t, StoreStats{Capacity: 1 << 20, ChunkBytes: DefaultChunkBytes}, st, "rounded down to whole chunks of the default")
	assert.Positive(t, s.Prefault(), "faulted in")
	assert.Equal(t, int64(1<<20), s.Memory().Bytes)
	assert.Zero(t, NewStore().Prefault())
	assert.Equal(t, hostmem.Report{}, NewStore().Memory())

	require.NoError(t, s.Close())
	assert.Zero(t, s.Stats().Capacity, "closed: its memory unmapped")
	assert.Equal(t, hostmem.Report{}, s.Memory())
	assert.Equal(t, contract.Declined, putObject(t, s, "k", []byte("x")), "closed: puts declined")
	require.NoError(t, s.Close(), "idempotent")
}

// A put that needs room evicts the least recently used objects, and
// only as many as it needs; a get (done) and a lookup are uses, Object
// is not; Set evicts alike.
func TestBoundedStoreEvictsLeastRecentlyUsed(t *testing.T) {
	s := boundedStore(t, 4, 64)
	for i, k := range []string{"a", "b", "c", "d"} {
		require.Equal(t, contract.Ready, putObject(t, s, k, bytesOf(64, byte(i))))
	}
	e, _, st := s.lookup("b") // a get of b
	require.Equal(t, contract.Ready, st)
	s.done(e)
	s.mu.Lock()
	assert.Equal(t, contract.Ready, s.presenceLocked([]byte("a"))) // a lookup of a
	s.mu.Unlock()
	_, ok := s.Object("c") // no use
	require.True(t, ok)

	for _, step := range []struct {
		put     string
		size    int
		evicted []string
	}{
		{"e", 64, []string{"c"}},
		{"f", 128, []string{"d", "b"}}, // two chunks: the two least recently used go
		{"g", 64, []string{"a"}},
	} {
		require.Equal(t, contract.Ready, putObject(t, s, step.put, bytesOf(step.size, 9)), step.put)
		for _, k := range step.evicted {
			_, ok := s.Object(k)
			assert.False(t, ok, "%s evicted by the put of %s", k, step.put)
		}
	}
	for _, k := range []string{"e", "f", "g"} {
		_, ok := s.Object(k)
		assert.True(t, ok, k)
	}
	st2 := s.Stats()
	assert.Equal(t, int64(4), st2.Evictions)
	assert.Equal(t, int64(4*64), st2.EvictedBytes)
	assert.Equal(t, int64(3), st2.Objects)
	assert.Equal(t, int64(4*64), st2.InUse)

	s.Set("h", bytesOf(64, 3)) // Set evicts too: e is the least recently used
	_, ok = s.Object("e")
	assert.False(t, ok)
	assert.Equal(t, int64(5), s.Stats().Evictions)
}

// A store full of objects of one size, asked for objects of another,
// evicts and stores them, and every object left reads back whole: the
// chunks any object gives back serve an object of any size, adjacent or
// not.
func TestBoundedStoreFullOfOneSizeTakesAnother(t *testing.T) {
	s := boundedStore(t, 8, 64)
	want := map[string][]byte{}
	put := func(key string, n int, seed byte) {
		t.Helper()
		data := bytesOf(n, seed)
		require.Equal(t, contract.Ready, putObject(t, s, key, data), key)
		want[key] = data
	}
	for i := range 8 {
		put(fmt.Sprint("small", i), 64, byte(i))
	}
	e, _, _ := s.lookup("small0") // keep small0 and small2 recent: the
	s.done(e)                     // chunks freed for the large objects
	e, _, _ = s.lookup("small2")  // are then not adjacent
	s.done(e)
	put("large0", 3*64, 100)
	put("large1", 3*64-10, 101) // a part of its last chunk
	for i := range 3 {
		put(fmt.Sprint("again", i), 64, byte(50+i))
	}
	put("huge", 8*64, 200) // the whole capacity: everything else goes
	for key, data := range want {
		got, ok := s.Object(key)
		if key == "huge" {
			require.True(t, ok)
			assert.Equal(t, data, got)
			continue
		}
		assert.False(t, ok, key)
	}
	st := s.Stats()
	assert.Zero(t, st.Declines)
	assert.Equal(t, int64(1), st.Objects)
	put("small0", 64, 7)
	got, ok := s.Object("small0")
	require.True(t, ok)
	assert.Equal(t, want["small0"], got)
	assert.Equal(t, int64(64), s.Stats().InUse)
}

// An object larger than the capacity, or one that fits only by evicting
// an object being read or written, is Declined and evicts nothing.
func TestBoundedStoreDeclinesWhatCannotFit(t *testing.T) {
	s := boundedStore(t, 4, 64)
	require.Equal(t, contract.Declined, putObject(t, s, "big", bytesOf(5*64, 1)))
	for _, k := range []string{"a", "b", "c"} {
		require.Equal(t, contract.Ready, putObject(t, s, k, bytesOf(64, 2)))
	}
	read, _, st := s.lookup("a")
	require.Equal(t, contract.Ready, st)
	w, st := s.reserve("w", 64)
	require.Equal(t, contract.Pending, st)
	assert.Equal(t, contract.Declined, putObject(t, s, "x", bytesOf(3*64, 3)), "b and c are all it may evict")
	_, ok := s.Object("b")
	assert.True(t, ok, "nothing evicted for a put that could not fit")
	require.Equal(t, contract.Ready, putObject(t, s, "y", bytesOf(2*64, 4)))
	_, okA := s.Object("a")
	_, okB := s.Object("b")
	assert.True(t, okA, "a is being read")
	assert.False(t, okB)
	assert.Equal(t, contract.NotReady, s.presenceLocked0("w"), "w is being written")
	st2 := s.Stats()
	assert.Equal(t, int64(2), st2.Declines)
	assert.Equal(t, int64(1), st2.Reading)
	assert.Equal(t, int64(1), st2.Writing)
	assert.ErrorIs(t, s.Close(), ErrStoreBusy, "refused while a get reads and a put writes")
	s.done(read)
	w.obj.fillFrom(bytesOf(64, 5))
	require.True(t, s.commit(w))
}

func (s *Store) presenceLocked0(key string) contract.RowStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.presenceLocked([]byte(key))
}

// A dropped object's chunks are reused only once no get reads it: the
// get that took it before the Delete still reads its bytes.
func TestBoundedStoreReusesChunksOnlyOnceNoGetReadsThem(t *testing.T) {
	s := boundedStore(t, 1, 256)
	s.Set("old", bytes.Repeat([]byte{7}, 256))
	held, obj, st := s.lookup("old")
	require.Equal(t, contract.Ready, st)
	s.Delete("old")
	assert.Equal(t, contract.Declined, putObject(t, s, "new", bytesOf(256, 1)), "its only chunk is still being read")
	assert.Equal(t, bytes.Repeat([]byte{7}, 256), obj.bytes(), "and keeps its bytes")
	assert.Equal(t, int64(256), s.Stats().InUse)
	s.done(held)
	assert.Zero(t, s.Stats().InUse)
	w, st := s.reserve("new", 256)
	require.Equal(t, contract.Pending, st)
	assert.Equal(t, obj.chunks, w.obj.chunks, "the chunk is reused once the get is done")
	s.abandon(w)
	assert.Zero(t, s.Stats().InUse, "an abandoned put gives its chunks back")
}

// A capacity of zero is a store that holds nothing: it maps nothing,
// every put is Declined (and counted), every get misses; Set keeps a
// test's object on the heap.
func TestBoundedStoreOfNoCapacity(t *testing.T) {
	s, err := NewBoundedStore(StoreOptions{})
	require.NoError(t, err)
	assert.Equal(t, hostmem.Report{}, s.Memory(), "nothing mapped")
	assert.Equal(t, contract.Declined, putObject(t, s, "k", []byte("x")))
	_, _, st := s.lookup("k")
	assert.Equal(t, contract.Miss, st)
	s.Set("seeded", []byte("y"))
	got, ok := s.Object("seeded")
	require.True(t, ok)
	assert.Equal(t, []byte("y"), got)
	assert.Equal(t, StoreStats{ChunkBytes: DefaultChunkBytes, Objects: 1, Bytes: 1, Declines: 1}, s.Stats())
	require.NoError(t, s.Close())
}

// Set and BeginWrite keep an object that cannot fit on the heap, never
// evicted; an object in chunks they replace gives its chunks back.
func TestBoundedStoreSetFallsBackToTheHeap(t *testing.T) {
	s := boundedStore(t, 2, 64)
	s.Set("a", bytesOf(64, 1))
	s.Set("huge", bytesOf(3*64, 2)) // larger than the capacity
	finish := s.BeginWrite("b")
	finish(bytesOf(64, 3))
	require.Equal(t, contract.Ready, putObject(t, s, "c", bytesOf(64, 4)))
	for k, want := range map[string][]byte{"huge": bytesOf(3*64, 2), "b": bytesOf(64, 3), "c": bytesOf(64, 4)} {
		got, ok := s.Object(k)
		require.True(t, ok, k)
		assert.Equal(t, want, got, k)
	}
	_, ok := s.Object("a")
	assert.False(t, ok, "a was the least recently used")
	st := s.Stats()
	assert.Equal(t, int64(3), st.Objects)
	assert.Equal(t, int64(5*64), st.Bytes, "the heap object counts among the bytes")
	assert.Equal(t, int64(2*64), st.InUse, "but holds no chunk")
	s.Set("b", []byte("x")) // replaces b: its chunk back, the new b in one
	assert.Equal(t, int64(2*64), s.Stats().InUse)
}

// SetCapacity caps the chunks a bounded store's objects may hold: a
// put beyond the cap evicts; SetFull declines every put, evicting
// nothing, until SetCapacity.
func TestBoundedStoreSetCapacityAndSetFull(t *testing.T) {
	s := boundedStore(t, 4, 64)
	for _, k := range []string{"a", "b", "c"} {
		require.Equal(t, contract.Ready, putObject(t, s, k, bytesOf(64, 1)))
	}
	s.SetCapacity(2*64 + 10)
	require.Equal(t, contract.Ready, putObject(t, s, "d", bytesOf(64, 2)))
	assert.Equal(t, int64(2), s.Stats().Objects, "two evicted to hold two chunks")
	assert.Equal(t, contract.Declined, putObject(t, s, "e", bytesOf(3*64, 2)), "beyond the cap")
	s.SetFull()
	assert.Equal(t, contract.Declined, putObject(t, s, "f", bytesOf(64, 2)))
	assert.Equal(t, int64(2), s.Stats().Objects, "a full store evicts nothing")
	s.SetCapacity(0)
	require.Equal(t, contract.Ready, putObject(t, s, "f", bytesOf(3*64, 3)))
	assert.Equal(t, int64(4*64), s.Stats().InUse, "the whole capacity again")
}

// An object's bytes go in and come out in order across chunks, adjacent
// or not, and across spans of any length.
func TestObjectRunsAcrossChunksAndSpans(t *testing.T) {
	s := boundedStore(t, 6, 64)
	p := s.chunks
	for _, tc := range []struct {
		name   string
		chunks []int32
		size   int64
		spans  []int64
	}{
		{"adjacent", []int32{0, 1, 2}, 3 * 64, []int64{3 * 64}},
		{"scattered", []int32{4, 1, 5}, 3*64 - 5, []int64{3*64 - 5}},
		{"reversed, odd spans", []int32{3, 2, 1, 0}, 4*64 - 1, []int64{1, 100, 60, 94}},
		{"one chunk, spans", []int32{5}, 64, []int64{10, 54}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := object{size: tc.size, chunks: tc.chunks, pool: p}
			src, err := Alloc(tc.size, 1, contract.Host)
			require.NoError(t, err)
			defer func() { require.NoError(t, src.Free()) }()
			want := bytesOf(int(tc.size), 11)
			copy(src.Bytes, want)
			o.fill(spansOf(src, tc.spans))
			assert.Equal(t, want, o.bytes())
			assert.Equal(t, want[:7], o.prefix(7))

			dst, err := Alloc(tc.size, 1, contract.Host)
			require.NoError(t, err)
			defer func() { require.NoError(t, dst.Free()) }()
			o.readInto(spansOf(dst, tc.spans), tc.size-3)
			assert.Equal(t, want[:tc.size-3], dst.Bytes[:tc.size-3])
			assert.Equal(t, []byte{0, 0, 0}, dst.Bytes[tc.size-3:tc.size], "nothing past n")
		})
	}
}

// spansOf cuts m's first bytes into spans of the given lengths.
func spansOf(m *Memory, lens []int64) []contract.Span {
	var out []contract.Span
	off := uintptr(0)
	for _, n := range lens {
		out = append(out, contract.Span{Addr: m.Region.Base + off, Len: n})
		off += uintptr(n)
	}
	return out
}
