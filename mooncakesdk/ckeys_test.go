package mooncakesdk

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCKeysLayOutNULTerminatedStrings(t *testing.T) {
	keys := []string{"a", "bb/cc", "ключ", "x"}
	ck := newCKeys(keys)
	defer ck.release()

	assert.Equal(t, []byte("a\x00bb/cc\x00ключ\x00x\x00"), ck.buf)
	require.Len(t, ck.ptrs, len(keys))
	for i, k := range keys {
		// Read the C string the way the library will: up to its NUL.
		got := unsafe.Slice(ck.ptrs[i], len(k)+1)
		assert.Equal(t, k+"\x00", string(got), "key %d", i)
	}
}

func TestCKeysOfNoKeys(t *testing.T) {
	ck := newCKeys(nil)
	defer ck.release()
	assert.Empty(t, ck.buf)
	assert.Empty(t, ck.ptrs)
}
