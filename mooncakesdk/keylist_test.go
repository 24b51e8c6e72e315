package mooncakesdk

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeyListPacksKeysAsTheCABITakesThem(t *testing.T) {
	var l KeyList // the zero KeyList is ready
	assert.Equal(t, 0, l.Len())
	require.NoError(t, l.Add(append(l.Tail(), "t/a"...)))
	require.NoError(t, l.Append("bb/cc"))
	require.NoError(t, l.Add(strconv.AppendInt(l.Tail(), 42, 10)))
	require.NoError(t, l.Append("ключ"))

	assert.Equal(t, 4, l.Len())
	assert.Equal(t, []byte("t/a\x00bb/cc\x0042\x00ключ\x00"), l.buf)
	assert.Equal(t, []int{0, 4, 10, 13}, l.offs)
	for i, want := range []string{"t/a", "bb/cc", "42", "ключ"} {
		assert.Equal(t, want, string(l.Key(i)), "key %d", i)
		assert.Len(t, l.Key(i), len(want), "key %d has no NUL", i)
	}
	assert.Equal(t, l.buf, l.Tail(), "the tail is the packed buffer, to be appended to")
}

func TestKeyListKeyCannotGrowIntoTheNextKey(t *testing.T) {
	var l KeyList
	require.NoError(t, PackKeys(&l, []string{"ab", "cd"}))
	k := l.Key(0)
	assert.Equal(t, len(k), cap(k), "a key's capacity ends at its NUL")
	_ = append(k, 'X') // must copy, not overwrite the NUL
	assert.Equal(t, "cd", string(l.Key(1)))
	assert.Equal(t, []byte("ab\x00cd\x00"), l.buf)
}

func TestKeyListRefusesAndStaysUnchanged(t *testing.T) {
	for _, tc := range []struct {
		name string
		add  func(l *KeyList) error
		want string
	}{
		{"nothing appended", func(l *KeyList) error { return l.Add(l.Tail()) }, "key 2 is empty"},
		{"a buffer shorter than the tail", func(l *KeyList) error { return l.Add(l.Tail()[:3]) }, "key 2 is empty"},
		{"a buffer that does not extend the tail", func(l *KeyList) error { return l.Add([]byte("x")) }, "key 2 is empty"},
		{"nil", func(l *KeyList) error { return l.Add(nil) }, "key 2 is empty"},
		{"a NUL in the new key", func(l *KeyList) error { return l.Add(append(l.Tail(), "a\x00b"...)) }, `key 2 ("a\x00b") holds a NUL byte`},
		{"an empty string", func(l *KeyList) error { return l.Append("") }, "key 2 is empty"},
		{"a string holding a NUL", func(l *KeyList) error { return l.Append("\x00") }, "key 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l KeyList
			require.NoError(t, PackKeys(&l, []string{"one", "two"}))
			before := append([]byte(nil), l.buf...)

			err := tc.add(&l)

			require.ErrorIs(t, err, ErrInvalidArgument)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, 2, l.Len())
			assert.Equal(t, before, l.buf)
			require.NoError(t, l.Append("three"), "still usable")
			assert.Equal(t, "three", string(l.Key(2)))
		})
	}
}

func TestKeyListResetReusesItsMemory(t *testing.T) {
	var l KeyList
	fill := func() {
		l.Reset()
		for i := range 256 {
			if err := l.Add(strconv.AppendUint(append(l.Tail(), "kv/model/"...), uint64(i), 16)); err != nil {
				t.Fatal(err)
			}
		}
	}
	fill()
	assert.Equal(t, 256, l.Len())
	assert.Equal(t, "kv/model/ff", string(l.Key(255)))
	allocs := testing.AllocsPerRun(20, fill)
	assert.Zero(t, allocs, "once grown, refilling allocates nothing")

	l.Reset()
	assert.Equal(t, 0, l.Len())
	assert.Empty(t, l.Tail())
}

func TestNilKeyListIsEmpty(t *testing.T) {
	var l *KeyList
	assert.Equal(t, 0, l.Len())
	assert.NoError(t, CheckExistList(l, nil))
	assert.NoError(t, CheckTransferList(l, nil, nil, nil))
}

func TestPackKeys(t *testing.T) {
	var l KeyList
	require.NoError(t, l.Append("stale"))
	require.NoError(t, PackKeys(&l, []string{"a", "b"}))
	assert.Equal(t, 2, l.Len(), "packing starts from an empty list")
	err := PackKeys(&l, []string{"a", "", "c"})
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), "key 1 is empty")
}

func TestCheckTransferList(t *testing.T) {
	var l KeyList
	require.NoError(t, PackKeys(&l, []string{"a", "b"}))
	for name, tc := range map[string]struct {
		bufs    []uintptr
		sizes   []uint64
		results []int64
		want    string
	}{
		"fewer buffers":        {[]uintptr{1}, []uint64{1, 1}, make([]int64, 2), "2 keys, 1 buffers"},
		"more results":         {[]uintptr{1, 1}, []uint64{1, 1}, make([]int64, 3), "3 results"},
		"address 0 for a size": {[]uintptr{1, 0}, []uint64{1, 8}, make([]int64, 2), `key 1 ("b"): buffer address 0 for 8 bytes`},
	} {
		err := CheckTransferList(&l, tc.bufs, tc.sizes, tc.results)
		require.ErrorIs(t, err, ErrInvalidArgument, name)
		assert.Contains(t, err.Error(), tc.want, name)
	}
	assert.NoError(t, CheckTransferList(&l, []uintptr{1, 0}, []uint64{1, 0}, make([]int64, 2)), "address 0 for 0 bytes")
	assert.ErrorIs(t, CheckExistList(&l, make([]int32, 1)), ErrInvalidArgument)
	assert.NoError(t, CheckExistList(&l, make([]int32, 2)))
}
