package memdrv_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// boundedFixture is a fixture whose driver runs over a bounded store of
// chunks chunks of one slot's size each. When the test ends the store
// is closed, which must succeed: nothing reads or writes it by then.
func boundedFixture(t *testing.T, chunks int64, o memdrv.Options) *fixture {
	t.Helper()
	if o.Logger == nil {
		o.Logger = quiet
	}
	s, err := memdrv.NewBoundedStore(memdrv.StoreOptions{Capacity: chunks * slotBytes, ChunkBytes: slotBytes})
	require.NoError(t, err)
	d := memdrv.New(s, o)
	f := &fixture{t: t, store: s, d: d, mem: paint(t, slotBytes, slotCount, contract.Host)}
	f.reg, err = d.Register(f.mem.Region)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, f.mem.Free(), "the fixture's memory freed")
		require.NoError(t, s.Close(), "the store closed")
	})
	return f
}

// putBig puts an object of two chunks from a region of its own, which
// it revokes once the put is over.
func (f *fixture) putBig() contract.Operation {
	f.t.Helper()
	big := alloc(f.t, 2*slotBytes, 1, contract.Host)
	reg, err := f.d.Register(big.Region)
	require.NoError(f.t, err)
	op, err := f.d.Put(batch(contract.Row{Name: []byte("big"), Spans: []contract.Span{big.Region.Slot(0)}}), nil)
	require.NoError(f.t, err)
	synctest.Wait()
	require.NoError(f.t, f.d.Unregister(reg))
	return op
}

// settled waits (in a bubble) until op's access ends and returns its rows.
func settled(t *testing.T, op contract.Operation) []contract.RowStatus {
	t.Helper()
	synctest.Wait()
	st := op.Poll(nil)
	require.Equal(t, contract.Ended, st.Access)
	return st.Rows
}

// present reports which keys hold an object, reading the store without
// using them.
func present(s *memdrv.Store, keys ...string) []bool {
	out := make([]bool, len(keys))
	for i, k := range keys {
		_, out[i] = s.Object(k)
	}
	return out
}

// A put that needs room evicts the least recently used object; a get
// that found an object and a lookup that found one both count as uses.
func TestBoundedStoreEvictionOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := boundedFixture(t, 4, memdrv.Options{Workers: 1})
		for i, k := range []string{"a", "b", "c", "d"} {
			f.write(i, byte(i))
			require.Equal(t, statuses(contract.Ready), settled(t, f.put(f.row(i, k))))
		}
		require.Equal(t, statuses(contract.Ready), settled(t, f.get(f.row(6, "b"))))
		got, err := f.d.Lookup(t.Context(), names("a"), nil)
		require.NoError(t, err)
		require.Equal(t, []contract.Presence{contract.Present}, got)

		for _, step := range []struct {
			slot    int
			put     string
			evicted string
		}{{4, "e", "c"}, {5, "f", "d"}, {7, "g", "b"}} {
			f.write(step.slot, 9)
			require.Equal(t, statuses(contract.Ready), settled(t, f.put(f.row(step.slot, step.put))), step.put)
			assert.Equal(t, []bool{false}, present(f.store, step.evicted), "the put of %s evicts %s", step.put, step.evicted)
		}
		assert.Equal(t, []bool{true, true, true, true}, present(f.store, "a", "e", "f", "g"), "a, looked up, outlived b, got earlier")
		st := f.store.Stats()
		assert.Equal(t, int64(3), st.Evictions)
		assert.Equal(t, int64(3*slotBytes), st.EvictedBytes)
		assert.Zero(t, st.Declines)
		f.teardown()
	})
}

// An object a get is reading is never evicted, even as the least
// recently used, nor its memory reused once deleted: a put that would
// fit only by evicting it is Declined, evicting nothing, and the get
// lands its bytes when the transfer goes on.
func TestBoundedStoreNeverEvictsWhatAGetReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := boundedFixture(t, 2, memdrv.Options{Workers: 2})
		a := f.write(0, 1)
		require.Equal(t, statuses(contract.Ready), settled(t, f.put(f.row(0, "a"))))
		f.write(1, 2)
		require.Equal(t, statuses(contract.Ready), settled(t, f.put(f.row(1, "b"))))

		gate := f.store.HoldTransfers(memdrv.GetDir, "a")
		get := f.get(f.row(5, "a"))
		require.NoError(t, gate.Held(t.Context()))
		assert.Equal(t, int64(1), f.store.Stats().Reading)

		f.write(2, 3)
		require.Equal(t, statuses(contract.Ready), settled(t, f.put(f.row(2, "c"))))
		assert.Equal(t, []bool{true, false, true}, present(f.store, "a", "b", "c"), "b evicted, not a, being read")

		op := f.putBig()
		assert.Equal(t, statuses(contract.Declined), settled(t, op), "two chunks only by evicting a")
		assert.Equal(t, []bool{true}, present(f.store, "c"), "a declined put evicts nothing")

		f.store.Delete("a")
		f.write(3, 4)
		require.Equal(t, statuses(contract.Ready), settled(t, f.put(f.row(3, "d"))))
		assert.Equal(t, []bool{false, false, true}, present(f.store, "a", "c", "d"), "a's chunk stays its own while read: c made the room")

		assert.Equal(t, contract.Open, get.Poll(nil).Access, "the get is still reading")
		gate.Release()
		assert.Equal(t, statuses(contract.Ready), settled(t, get))
		assert.Equal(t, a, f.mem.Slot(5), "the get landed a's bytes")
		st := f.store.Stats()
		assert.Zero(t, st.Reading)
		assert.Equal(t, int64(slotBytes), st.InUse, "a's chunk came back once the get was done")
		assert.Equal(t, int64(2), st.Evictions)
		assert.Equal(t, int64(1), st.Declines)
		f.teardown()
	})
}

// An object a put is writing is never evicted: its memory is held from
// the moment the put took it, and the put completes it whole.
func TestBoundedStoreNeverEvictsWhatAPutWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := boundedFixture(t, 2, memdrv.Options{Workers: 2})
		f.write(0, 1)
		require.Equal(t, statuses(contract.Ready), settled(t, f.put(f.row(0, "a"))))

		gate := f.store.HoldTransfers(memdrv.PutDir, "w")
		w := f.write(1, 2)
		put := f.put(f.row(1, "w"))
		require.NoError(t, gate.Held(t.Context()))
		assert.Equal(t, int64(1), f.store.Stats().Writing)

		f.write(2, 3)
		require.Equal(t, statuses(contract.Ready), settled(t, f.put(f.row(2, "b"))))
		assert.Equal(t, []bool{false, true}, present(f.store, "a", "b"), "a evicted; w, being written, held its chunk")

		op := f.putBig()
		assert.Equal(t, statuses(contract.Declined), settled(t, op), "two chunks only by evicting w")
		assert.Equal(t, []bool{true}, present(f.store, "b"), "a declined put evicts nothing")

		assert.Equal(t, contract.Open, put.Poll(nil).Access, "the put is still writing")
		gate.Release()
		assert.Equal(t, statuses(contract.Ready), settled(t, put))
		got, ok := f.store.Object("w")
		require.True(t, ok)
		assert.Equal(t, w, got)
		assert.Zero(t, f.store.Stats().Writing)
		f.teardown()
	})
}

// A bounded store of a capacity of zero holds nothing: every put is
// Declined and counted, every get misses.
func TestBoundedStoreOfNoCapacityDeclinesEveryPut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := boundedFixture(t, 0, memdrv.Options{})
		f.write(0, 1)
		assert.Equal(t, statuses(contract.Declined, contract.Declined), settled(t, f.put(f.row(0, "a"), f.row(1, "b"))))
		assert.Equal(t, statuses(contract.Miss), settled(t, f.get(f.row(2, "a"))))
		st := f.store.Stats()
		assert.Equal(t, int64(2), st.Declines)
		assert.Zero(t, st.Capacity)
		assert.Zero(t, st.Objects)
		f.teardown()
	})
}

// TestBoundedStoreConcurrentPutsAndGets runs callers on three drivers
// over one bounded store too small for their names, with real
// goroutines, for the race detector: objects of two sizes (one chunk,
// three) are put, got and looked up while the store evicts all the time.
// A get that ends Ready must land exactly its name's bytes (a chunk
// reused under a read would show), and at the end nothing is read or
// written and the chunks held are exactly the objects'.
func TestBoundedStoreConcurrentPutsAndGets(t *testing.T) {
	const (
		chunk   = 256
		names   = 24
		drivers = 3
		callers = 2 // per driver
		rounds  = 80
	)
	s, err := memdrv.NewBoundedStore(memdrv.StoreOptions{Capacity: 12 * chunk, ChunkBytes: chunk})
	require.NoError(t, err)
	sizeOf := func(n int) int64 { return chunk * (1 + 2*int64(n%3/2)) } // every third name three chunks
	want := func(n int) []byte {
		b := make([]byte, sizeOf(n))
		for i := range b {
			b[i] = byte(n*37 + i*13)
		}
		return b
	}
	var wg sync.WaitGroup
	var ds []*memdrv.Driver
	for d := range drivers {
		drv := memdrv.New(s, memdrv.Options{Workers: 2, Logger: quiet})
		ds = append(ds, drv)
		small, _ := register(t, drv, chunk, callers)
		large, _ := register(t, drv, 3*chunk, callers)
		for c := range callers {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(d), uint64(c)))
				for range rounds {
					n := rng.IntN(names)
					mem := small
					if sizeOf(n) > chunk {
						mem = large
					}
					key := fmt.Sprint("name-", n)
					row := contract.Row{Name: []byte(key), Spans: []contract.Span{mem.Region.Slot(c)}}
					switch rng.IntN(3) {
					case 0:
						copy(mem.Slot(c), want(n))
						st, err := settle(func(f func()) (contract.Operation, error) { return drv.Put(batch(row), f) })
						if !assert.NoError(t, err) {
							return
						}
						assert.Contains(t, statuses(contract.Ready, contract.NotReady, contract.Declined), st.Rows[0], key)
					case 1:
						clear(mem.Slot(c))
						st, err := settle(func(f func()) (contract.Operation, error) { return drv.Get(batch(row), nil, f) })
						if !assert.NoError(t, err) {
							return
						}
						switch st.Rows[0] {
						case contract.Ready:
							assert.True(t, bytes.Equal(want(n), mem.Slot(c)), "%s landed other bytes", key)
						case contract.Miss, contract.NotReady:
						default:
							t.Errorf("%s: get ended %v", key, st.Rows[0])
						}
					default:
						_, err := drv.Lookup(context.Background(), contract.LookupBatch{Keys: plain, Names: [][]byte{[]byte(key)}}, nil)
						assert.NoError(t, err)
					}
				}
			})
		}
	}
	wg.Wait()
	for _, d := range ds {
		require.True(t, d.Drain(context.Background()))
	}
	st := s.Stats()
	assert.Zero(t, st.Reading)
	assert.Zero(t, st.Writing)
	assert.Positive(t, st.Evictions, "the names do not fit: puts evicted")
	var held, objects int64
	for n := range names {
		if got, ok := s.Object(fmt.Sprint("name-", n)); ok {
			assert.Equal(t, want(n), got)
			held += sizeOf(n)
			objects++
		}
	}
	assert.Equal(t, objects, st.Objects)
	assert.Equal(t, held, st.InUse, "the chunks held are the objects'")
	assert.LessOrEqual(t, st.InUse, st.Capacity)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
}
