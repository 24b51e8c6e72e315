package diskdrv

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A header holds its key and length through encode and decode, for
// every key up to the longest a page holds.
func TestHeaderRoundTrip(t *testing.T) {
	page := make([]byte, headerBytes)
	for _, key := range []string{"", "k", strings.Repeat("x", 1156), strings.Repeat("y", maxKeyBytes)} {
		encodeHeader(page, key, 12345)
		k, n, err := decodeHeader(page)
		require.NoError(t, err)
		assert.Equal(t, key, k)
		assert.Equal(t, int64(12345), n)
	}
	page[headerFixed] ^= 1 // a flipped bit of the key
	_, _, err := decodeHeader(page)
	assert.ErrorIs(t, err, errBadHeader)
}

// FuzzHeader decodes any page: a page accepted encodes back to itself
// (its key and length are what it says), and nothing panics.
func FuzzHeader(f *testing.F) {
	page := make([]byte, headerBytes)
	encodeHeader(page, "seed/key", 4096)
	f.Add(page)
	f.Add(make([]byte, headerBytes))
	f.Add([]byte("kvsdisk1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		key, size, err := decodeHeader(data)
		if err != nil {
			return
		}
		again := make([]byte, headerBytes)
		encodeHeader(again, key, size)
		k, n, err := decodeHeader(again)
		require.NoError(t, err)
		assert.Equal(t, key, k)
		assert.Equal(t, size, n)
		assert.Equal(t, data[:headerFixed+len(key)], again[:headerFixed+len(key)])
	})
}
