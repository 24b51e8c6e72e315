package mooncakesdk

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// packedKeys builds a KeyList the way a driver does: each key appended
// to the list's tail, then added.
func packedKeys(t *testing.T, keys ...string) *KeyList {
	t.Helper()
	l := new(KeyList)
	for _, k := range keys {
		require.NoError(t, l.Add(append(l.Tail(), k...)))
	}
	return l
}

// assertListCrossed checks that the stub received l's keys as pointers
// into l's own buffer: what crossed is the packed buffer, not a copy.
func assertListCrossed(t *testing.T, s *stubLib, l *KeyList) {
	t.Helper()
	require.Equal(t, uint64(l.Len()), s.countSeen())
	for i := range l.Len() {
		assert.Equal(t, string(l.Key(i)), s.keySeen(i), "key %d", i)
		assert.Equal(t, uint64(uintptr(unsafe.Pointer(&l.Key(i)[0]))), s.keyAddr(uint64(i)), "key %d crossed from the list's buffer", i)
	}
}

func TestListCallsCross(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, s *stubLib, c Client, l *KeyList)
	}{
		{"put", func(t *testing.T, s *stubLib, c Client, l *KeyList) {
			mem, base := offHeap(t, 3*4096)
			for i := range mem {
				mem[i] = byte(i*5 + 1)
			}
			bufs := []uintptr{base, base + 4096, base + 2*4096}
			sizes := []uint64{4096, 100, 1}
			s.scriptCodes([]int64{0, int64(NoAvailableHandle), int64(RPCTimeout)}, 3)
			results := make([]int64, 3)

			require.NoError(t, c.BatchPutFromList(l, bufs, sizes, results))

			assert.Equal(t, []int64{0, -200, -901}, results)
			assertListCrossed(t, s, l)
			for i := range bufs {
				assert.Equal(t, uint64(bufs[i]), s.seen(0, uint64(i)), "buffer %d", i)
				assert.Equal(t, sizes[i], s.seen(1, uint64(i)), "size %d", i)
				off := int(bufs[i] - base)
				assert.Equal(t, fnv1a(mem[off:off+int(sizes[i])]), s.seen(2, uint64(i)), "bytes read from buffer %d", i)
			}
		}},
		{"get", func(t *testing.T, s *stubLib, c Client, l *KeyList) {
			mem, base := offHeap(t, 3*64)
			for i := range mem {
				mem[i] = 0xEE
			}
			bufs := []uintptr{base, base + 64, base + 128}
			sizes := []uint64{64, 5 << 30, 64}
			s.scriptCodes([]int64{6, int64(ObjectNotFound), int64(InvalidParams)}, 3)
			results := make([]int64, 3)

			require.NoError(t, c.BatchGetIntoList(l, bufs, sizes, results))

			assert.Equal(t, []int64{6, -704, -600}, results)
			assertListCrossed(t, s, l)
			assert.Equal(t, []byte("t/at/a"), mem[:6], "the stub wrote the head of buffer 0 from the key it read")
			assert.Equal(t, bytes.Repeat([]byte{0xEE}, 3*64-6), mem[6:])
			assert.Equal(t, sizes[1], s.seen(1, 1), "size_t crosses whole")
		}},
		{"exist", func(t *testing.T, s *stubLib, c Client, l *KeyList) {
			s.scriptCodes([]int64{1, 0, int64(RPCFail)}, 3)
			results := make([]int32, 3)

			require.NoError(t, c.BatchIsExistList(l, results))

			assert.Equal(t, []int32{1, 0, -900}, results)
			assertListCrossed(t, s, l)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := openStub(t)
			l := packedKeys(t, "t/a", "t/bb/cc", "t/ключ")
			tc.run(t, s, c, l)
			assert.Equal(t, "t/a\x00t/bb/cc\x00t/ключ\x00", string(l.Tail()), "the list is as it was")
			assert.NotContains(t, s.callLog(), "!", "every call reached a live, set-up handle")
		})
	}
}

func TestListCallsRefuseLikeTheStringOnes(t *testing.T) {
	s, c := openStub(t)
	before := s.callLog()
	l := packedKeys(t, "a", "b")
	for name, call := range map[string]func() error{
		"put: fewer buffers than keys": func() error {
			return c.BatchPutFromList(l, []uintptr{1}, []uint64{1, 1}, make([]int64, 2))
		},
		"get: fewer results than keys": func() error {
			return c.BatchGetIntoList(l, []uintptr{1, 1}, []uint64{1, 1}, make([]int64, 1))
		},
		"get: buffer 0 with a size": func() error {
			return c.BatchGetIntoList(l, []uintptr{1, 0}, []uint64{1, 8}, make([]int64, 2))
		},
		"exist: results short": func() error { return c.BatchIsExistList(l, make([]int32, 1)) },
	} {
		assert.ErrorIs(t, call(), ErrInvalidArgument, name)
	}
	var empty KeyList
	assert.NoError(t, c.BatchPutFromList(&empty, nil, nil, nil))
	assert.NoError(t, c.BatchGetIntoList(nil, nil, nil, nil))
	assert.NoError(t, c.BatchIsExistList(&empty, nil))
	assert.Equal(t, before, s.callLog(), "no call reached the library")

	_, base := offHeap(t, 16)
	s.scriptBatch(-1)
	res := []int64{7, 7}
	var ce *CallError
	require.ErrorAs(t, c.BatchPutFromList(l, []uintptr{base, base + 8}, []uint64{8, 8}, res), &ce)
	assert.Equal(t, "mooncake_store_batch_put_from", ce.Func)
	assert.Equal(t, []int64{7, 7}, res, "no result written")
	s.scriptBatch(0)

	require.NoError(t, c.Destroy())
	assert.ErrorIs(t, c.BatchIsExistList(l, make([]int32, 2)), ErrClosed)
	assert.ErrorIs(t, c.BatchPutFromList(l, []uintptr{1, 1}, []uint64{1, 1}, make([]int64, 2)), ErrClosed)
	assert.ErrorIs(t, c.BatchGetIntoList(l, []uintptr{1, 1}, []uint64{1, 1}, make([]int64, 2)), ErrClosed)
}

// TestListCallsAllocateNothingPerKey: what a List call allocates does
// not grow with its keys (the pointer array and a put's int codes are
// pooled, the keys' buffer is the caller's). The rest is purego's own.
func TestListCallsAllocateNothingPerKey(t *testing.T) {
	_, c := openStub(t)
	_, base := offHeap(t, 64*64)
	allocs := func(n int, call func(l *KeyList, bufs []uintptr, sizes []uint64) error) float64 {
		l := new(KeyList)
		bufs := make([]uintptr, n)
		sizes := make([]uint64, n)
		for i := range n {
			require.NoError(t, l.Add(strconv.AppendInt(append(l.Tail(), "t/"...), int64(i), 10)))
			bufs[i], sizes[i] = base+uintptr(i*64), 64
		}
		require.NoError(t, call(l, bufs, sizes)) // warm the pools
		return testing.AllocsPerRun(50, func() {
			if err := call(l, bufs, sizes); err != nil {
				t.Error(err)
			}
		})
	}
	for name, call := range map[string]func(l *KeyList, bufs []uintptr, sizes []uint64) error{
		"put": func(l *KeyList, bufs []uintptr, sizes []uint64) error {
			return c.BatchPutFromList(l, bufs, sizes, make([]int64, 0, 64)[:len(bufs)])
		},
		"get": func(l *KeyList, bufs []uintptr, sizes []uint64) error {
			return c.BatchGetIntoList(l, bufs, sizes, make([]int64, 0, 64)[:len(bufs)])
		},
		"exist": func(l *KeyList, _ []uintptr, _ []uint64) error {
			return c.BatchIsExistList(l, make([]int32, 0, 64)[:l.Len()])
		},
	} {
		one, many := allocs(1, call), allocs(64, call)
		// A per-key allocation would add 63 or more; under -race
		// sync.Pool drops some of what is put back, so the pooled
		// arrays are sometimes made again: a margin of 3.
		assert.InDelta(t, one, many, 3, "%s: allocations per call with 1 key and with 64", name)
		t.Logf("%s: %.0f allocations per call, whatever the keys", name, many)
	}
}

func TestCheckLibraryReportsWhatOpenWouldLoad(t *testing.T) {
	path := buildStub(t, "libmooncake_store.so")
	sum, err := fileSHA256(path)
	require.NoError(t, err)
	t.Run("pinned", func(t *testing.T) {
		info, err := CheckLibrary(MooncakeConfig{Library: path, SDKSHA256: []string{sum}}, nil)
		require.NoError(t, err)
		assert.Equal(t, LibraryInfo{Name: path, File: path, SHA256: sum, Pinned: true}, info)
	})
	t.Run("not pinned", func(t *testing.T) {
		info, err := CheckLibrary(MooncakeConfig{Library: path}, nil)
		require.NoError(t, err)
		assert.False(t, info.Pinned)
		assert.Equal(t, sum, info.SHA256)
	})
	t.Run("another pin", func(t *testing.T) {
		_, err := CheckLibrary(MooncakeConfig{Library: path, SDKSHA256: []string{strings.Repeat("0", 64)}}, nil)
		require.ErrorIs(t, err, ErrLibraryHash)
		assert.Contains(t, err.Error(), sum)
	})
	t.Run("a missing symbol", func(t *testing.T) {
		lacking := buildStub(t, "liblacking.so", "-DSTUB_OMIT_REMOVE")
		_, err := CheckLibrary(MooncakeConfig{Library: lacking}, nil)
		require.ErrorIs(t, err, ErrLibrary)
		assert.Contains(t, err.Error(), "mooncake_store_remove")
	})
	t.Run("no such file", func(t *testing.T) {
		_, err := CheckLibrary(MooncakeConfig{Library: filepath.Join(t.TempDir(), "none.so")}, nil)
		require.ErrorIs(t, err, ErrLibrary)
	})
}
