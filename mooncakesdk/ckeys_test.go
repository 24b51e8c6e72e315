package mooncakesdk

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPinKeysPointsIntoTheListsOwnBuffer(t *testing.T) {
	var l KeyList
	keys := []string{"a", "bb/cc", "ключ", "x"}
	require.NoError(t, PackKeys(&l, keys))
	ck := pinKeys(&l)
	defer ck.release()

	require.Len(t, ck.ptrs, len(keys))
	for i, k := range keys {
		assert.Same(t, &l.Key(i)[0], ck.ptrs[i], "key %d points into the list, not a copy", i)
		// Read the C string the way the library will: up to its NUL.
		got := unsafe.Slice(ck.ptrs[i], len(k)+1)
		assert.Equal(t, k+"\x00", string(got), "key %d", i)
	}
}

func TestPinKeysReusesItsArray(t *testing.T) {
	var l KeyList
	for i := range 32 {
		require.NoError(t, l.Append(string(rune('a'+i%26))))
	}
	pinKeys(&l).release() // the pool now holds an array this long
	allocs := testing.AllocsPerRun(100, func() {
		pinKeys(&l).release()
	})
	assert.Zero(t, allocs, "a pooled pointer array, no allocation per call")
}

func TestPutCodesAreReused(t *testing.T) {
	getPutCodes(64).put()
	allocs := testing.AllocsPerRun(100, func() {
		pc := getPutCodes(64)
		pc.codes[63] = -1
		pc.put()
	})
	assert.Zero(t, allocs)
}
