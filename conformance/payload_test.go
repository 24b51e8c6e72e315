package conformance

import (
	"hash/fnv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPayload: eight bytes a word make the same bytes as one a step.
func TestPayload(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 4096, 4099} {
		h := fnv.New64a()
		h.Write([]byte("key"))
		x := h.Sum64() | 1
		want := make([]byte, n)
		for i := range want {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			want[i] = byte(x)
		}
		assert.Equal(t, want, payload("key", n), "%d bytes", n)
	}
	assert.NotEqual(t, payload("a", 64), payload("b", 64))
}
