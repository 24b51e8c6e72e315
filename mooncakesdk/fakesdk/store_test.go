package fakesdk

import (
	"bytes"
	"testing"

	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const slot = 64

// TestStoreBehaviour: the fake's answers without faults, one row per
// behaviour of the real store (docs/design/mooncakesdk.md, section "The
// fake store (fakesdk)").
func TestStoreBehaviour(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		run  func(t *testing.T, st *Store, c *Client, s *slab)
	}{
		{"a put stores the object whole", Options{}, func(t *testing.T, st *Store, c *Client, s *slab) {
			s.fill(0, 0xA1)
			assert.Equal(t, []int64{0}, put(t, c, s, []string{"k"}, 0))
			obj, ok := st.Object("k")
			require.True(t, ok)
			assert.Equal(t, s.slot(0), obj)
			assert.Equal(t, int64(slot), st.Used())
		}},
		{"a put never overwrites and still answers 0", Options{}, func(t *testing.T, st *Store, c *Client, s *slab) {
			s.fill(0, 1)
			s.fill(1, 2)
			put(t, c, s, []string{"k"}, 0)
			assert.Equal(t, []int64{0}, put(t, st.Client(), s, []string{"k"}, 1))
			obj, _ := st.Object("k")
			assert.Equal(t, bytes.Repeat([]byte{1}, slot), obj, "the first version stays")
		}},
		{"is-exist is 1 only for a complete object", Options{}, func(t *testing.T, st *Store, c *Client, s *slab) {
			put(t, c, s, []string{"here"}, 0)
			assert.Equal(t, []int32{1, 0}, exist(t, c, "here", "absent"))
		}},
		{"a get into a buffer of the object's size", Options{}, func(t *testing.T, st *Store, c *Client, s *slab) {
			s.fill(0, 7)
			put(t, c, s, []string{"k"}, 0)
			assert.Equal(t, []int64{slot}, get(t, c, s, []string{"k"}, 1))
			assert.Equal(t, s.slot(0), s.slot(1))
		}},
		{"a get into a larger buffer writes the head and answers the size", Options{}, func(t *testing.T, st *Store, c *Client, s *slab) {
			_, err := st.Seed("k", []byte("short"))
			require.NoError(t, err)
			s.fill(0, 0xEE)
			assert.Equal(t, []int64{5}, get(t, c, s, []string{"k"}, 0))
			assert.Equal(t, []byte("short"), s.slot(0)[:5])
			assert.Equal(t, bytes.Repeat([]byte{0xEE}, slot-5), s.slot(0)[5:], "the tail is untouched")
		}},
		{"a get into a smaller buffer answers -600 and writes nothing", Options{}, func(t *testing.T, st *Store, c *Client, s *slab) {
			_, err := st.Seed("big", bytes.Repeat([]byte{9}, slot+1))
			require.NoError(t, err)
			s.fill(0, 0xEE)
			assert.Equal(t, []int64{-600}, get(t, c, s, []string{"big"}, 0))
			assert.Equal(t, bytes.Repeat([]byte{0xEE}, slot), s.slot(0))
		}},
		{"a get of a missing key answers -704 and writes nothing", Options{}, func(t *testing.T, st *Store, c *Client, s *slab) {
			s.fill(0, 0xEE)
			assert.Equal(t, []int64{-704}, get(t, c, s, []string{"nope"}, 0))
			assert.Equal(t, bytes.Repeat([]byte{0xEE}, slot), s.slot(0))
		}},
		{"a put of 0 bytes answers -600", Options{}, func(t *testing.T, st *Store, c *Client, s *slab) {
			res := make([]int64, 1)
			require.NoError(t, c.BatchPutFrom([]string{"k"}, []uintptr{s.addr(0)}, []uint64{0}, res))
			assert.Equal(t, []int64{-600}, res)
			assert.Equal(t, []int32{0}, exist(t, c, "k"))
		}},
		{"a full pool answers -200", Options{Capacity: 2 * slot}, func(t *testing.T, st *Store, c *Client, s *slab) {
			assert.Equal(t, []int64{0, 0, -200}, put(t, c, s, []string{"a", "b", "c"}, 0, 1, 2))
			assert.Equal(t, []int32{1, 1, 0}, exist(t, c, "a", "b", "c"))
			assert.Equal(t, []int64{0}, put(t, c, s, []string{"a"}, 0), "an existing key still answers 0")
		}},
		{"RDMA: an unregistered buffer answers -800 and moves nothing", Options{RDMA: true}, func(t *testing.T, st *Store, c *Client, s *slab) {
			_, err := st.Seed("there", []byte("bytes"))
			require.NoError(t, err)
			s.fill(1, 0xEE)
			assert.Equal(t, []int64{-800}, put(t, c, s, []string{"k"}, 0))
			assert.Equal(t, []int64{-800}, get(t, c, s, []string{"there"}, 1))
			assert.Equal(t, []int32{0}, exist(t, c, "k"))
			assert.Equal(t, bytes.Repeat([]byte{0xEE}, slot), s.slot(1))
			assert.Equal(t, 0, st.Running(), "no transfer started")
		}},
		{"RDMA: a registered buffer works, one reaching past the region does not", Options{RDMA: true}, func(t *testing.T, st *Store, c *Client, s *slab) {
			require.NoError(t, c.RegisterBuffer(s.addr(0), 2*slot))
			assert.Equal(t, []int64{0, 0}, put(t, c, s, []string{"a", "b"}, 0, 1))
			assert.Equal(t, []int64{-800}, put(t, c, s, []string{"c"}, 2))
			res := make([]int64, 1)
			require.NoError(t, c.BatchPutFrom([]string{"d"}, []uintptr{s.addr(1) + 1}, []uint64{slot}, res))
			assert.Equal(t, []int64{-800}, res, "one byte past the region")
			assert.Equal(t, []int64{-800}, put(t, st.Client(), s, []string{"e"}, 0), "registration is per client")
		}},
		{"TCP: registration is not checked", Options{}, func(t *testing.T, st *Store, c *Client, s *slab) {
			assert.Equal(t, []int64{0}, put(t, c, s, []string{"k"}, 0))
			assert.Equal(t, []int64{slot}, get(t, c, s, []string{"k"}, 1))
		}},
		{"registration refuses overlaps, address 0 and unknown regions", Options{}, func(t *testing.T, st *Store, c *Client, s *slab) {
			require.NoError(t, c.RegisterBuffer(s.addr(0), 2*slot))
			var ce *mooncakesdk.CallError
			require.ErrorAs(t, c.RegisterBuffer(s.addr(1), slot), &ce)
			assert.Equal(t, mooncakesdk.InvalidParams, ce.Code)
			require.ErrorAs(t, c.RegisterBuffer(0, slot), &ce)
			assert.Equal(t, mooncakesdk.InternalError, ce.Code)
			require.ErrorAs(t, c.RegisterBuffer(s.addr(2), 0), &ce)
			assert.Equal(t, mooncakesdk.InternalError, ce.Code)
			require.ErrorAs(t, c.UnregisterBuffer(s.addr(1)), &ce)
			assert.Equal(t, mooncakesdk.InvalidParams, ce.Code)
			require.NoError(t, c.UnregisterBuffer(s.addr(0)))
			require.NoError(t, c.RegisterBuffer(s.addr(1), slot), "free again")
		}},
		{"objects are shared by the store's clients and outlive a destroyed one", Options{}, func(t *testing.T, st *Store, c *Client, s *slab) {
			put(t, c, s, []string{"k"}, 0)
			require.NoError(t, c.Destroy())
			assert.Equal(t, []int32{1}, exist(t, st.Client(), "k"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := New(tc.opts)
			tc.run(t, st, st.Client(), newSlab(t, 4, slot))
		})
	}
}

// TestWhileAPutIsInFlight: a put held between claiming its key and
// storing it; each row checks what the store answers meanwhile, then the
// put is let go and must have stored the first writer's bytes.
func TestWhileAPutIsInFlight(t *testing.T) {
	type world struct {
		st            *Store
		writer, other *Client
		s             *slab
	}
	for _, tc := range []struct {
		name string
		opts Options
		run  func(t *testing.T, w world)
	}{
		{"a get answers -703 and writes nothing", Options{}, func(t *testing.T, w world) {
			w.s.fill(2, 0xEE)
			assert.Equal(t, []int64{-703}, get(t, w.other, w.s, []string{"k"}, 2))
			assert.Equal(t, bytes.Repeat([]byte{0xEE}, slot), w.s.slot(2))
		}},
		{"is-exist answers 0: no complete object yet", Options{}, func(t *testing.T, w world) {
			assert.Equal(t, []int32{0}, exist(t, w.other, "k"))
		}},
		{"a second put answers 0 and stores nothing", Options{}, func(t *testing.T, w world) {
			assert.Equal(t, []int64{0}, put(t, w.other, w.s, []string{"k"}, 1))
			assert.Equal(t, []int64{0}, put(t, w.writer, w.s, []string{"k"}, 1), "from the writer's own client too")
			_, stored := w.st.Object("k")
			assert.False(t, stored)
		}},
		{"the claim holds its bytes: a put that does not fit beside it answers -200", Options{Capacity: slot}, func(t *testing.T, w world) {
			assert.Equal(t, int64(slot), w.st.Used())
			assert.Equal(t, []int64{-200}, put(t, w.other, w.s, []string{"j"}, 1))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := New(tc.opts)
			gate := NewGate()
			require.NoError(t, st.Script(Fault{Op: Put, Key: "k", Hold: gate, Times: 1}))
			w := world{st: st, writer: st.Client(), other: st.Client(), s: newSlab(t, 3, slot)}
			w.s.fill(0, 1)
			w.s.fill(1, 2)
			done := make(chan []int64)
			go func() {
				res := make([]int64, 1)
				assert.NoError(t, w.writer.BatchPutFrom([]string{"k"}, w.s.addrs(0), w.s.sizes(1), res))
				done <- res
			}()
			<-gate.Reached()

			tc.run(t, w)

			gate.Open()
			assert.Equal(t, []int64{0}, <-done)
			assert.Equal(t, []int32{1}, exist(t, w.other, "k"))
			obj, _ := st.Object("k")
			assert.Equal(t, bytes.Repeat([]byte{1}, slot), obj, "the first writer's bytes")
		})
	}
}

// TestBadCallsReachNothing: malformed arguments and empty batches never
// reach the store, like the real client.
func TestBadCallsReachNothing(t *testing.T) {
	st := New(Options{})
	c := st.Client()
	for name, call := range map[string]func() error{
		"lengths differ": func() error { return c.BatchPutFrom([]string{"a"}, nil, nil, nil) },
		"empty key":      func() error { return c.BatchGetInto([]string{""}, []uintptr{1}, []uint64{1}, make([]int64, 1)) },
		"NUL in key":     func() error { return c.BatchIsExist([]string{"a\x00"}, make([]int32, 1)) },
		"address 0":      func() error { return c.BatchPutFrom([]string{"a"}, []uintptr{0}, []uint64{1}, make([]int64, 1)) },
	} {
		assert.ErrorIs(t, call(), mooncakesdk.ErrInvalidArgument, name)
	}
	assert.NoError(t, c.BatchPutFrom(nil, nil, nil, nil))
	assert.NoError(t, c.BatchIsExist(nil, nil))
	assert.Equal(t, Calls{}, st.Calls())
}

func TestDestroy(t *testing.T) {
	st := New(Options{})
	c := st.Client()
	require.NoError(t, c.HealthCheck())
	require.NoError(t, c.Destroy())
	assert.ErrorIs(t, c.Destroy(), mooncakesdk.ErrClosed)
	assert.ErrorIs(t, c.HealthCheck(), mooncakesdk.ErrClosed)
	assert.ErrorIs(t, c.BatchIsExist([]string{"k"}, make([]int32, 1)), mooncakesdk.ErrClosed)
	assert.ErrorIs(t, c.RegisterBuffer(1, 1), mooncakesdk.ErrClosed)
	assert.ErrorIs(t, c.UnregisterBuffer(1), mooncakesdk.ErrClosed)
	assert.Equal(t, Calls{Health: 1, Destroy: 1}, st.Calls())
}

func TestSeed(t *testing.T) {
	st := New(Options{})
	ok, err := st.Seed("k", []byte("one"))
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = st.Seed("k", []byte("two"))
	require.NoError(t, err)
	assert.False(t, ok, "never overwrites")
	obj, _ := st.Object("k")
	assert.Equal(t, []byte("one"), obj)
	_, err = st.Seed("", []byte("x"))
	assert.ErrorIs(t, err, ErrSeed)
	_, err = st.Seed("e", nil)
	assert.ErrorIs(t, err, ErrSeed)
}

func TestRemove(t *testing.T) {
	s := New(Options{})
	c := s.Client()
	var r mooncakesdk.Remover = c
	_, err := s.Seed("k", []byte("object"))
	require.NoError(t, err)
	require.NoError(t, r.Remove("k", false))
	_, ok := s.Object("k")
	assert.False(t, ok)
	var ce *mooncakesdk.CallError
	require.ErrorAs(t, r.Remove("k", true), &ce)
	assert.Equal(t, mooncakesdk.ObjectNotFound, ce.Code)
	assert.Equal(t, "mooncake_store_remove", ce.Func)
	assert.ErrorIs(t, r.Remove("", true), mooncakesdk.ErrInvalidArgument)
	assert.ErrorIs(t, r.Remove("\x00k", true), mooncakesdk.ErrInvalidArgument, "a NUL as the key's first byte")
	assert.Equal(t, 2, s.Calls().Remove)
	require.NoError(t, s.Script(Fault{Op: Remove, Code: mooncakesdk.ObjectHasLease, Times: 1}))
	_, _ = s.Seed("k", []byte("again"))
	require.ErrorAs(t, r.Remove("k", false), &ce)
	assert.Equal(t, mooncakesdk.ObjectHasLease, ce.Code)
	require.NoError(t, c.Destroy())
	assert.ErrorIs(t, r.Remove("k", true), mooncakesdk.ErrClosed)
}
