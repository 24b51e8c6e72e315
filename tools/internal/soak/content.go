package soak

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
)

// nameOf is the name of row index i of the run.
func nameOf(runID string, i int) []byte {
	return fmt.Appendf(nil, "%s/%d", runID, i)
}

// fill writes into dst the bytes name stands for: a stream seeded by the
// name's hash, so two names never share their bytes and a name's bytes
// never depend on who writes them.
func fill(dst, name []byte) {
	h := fnv.New64a()
	h.Write(name)
	x := h.Sum64() | 1
	var word [8]byte
	for i := 0; i < len(dst); i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(word[:], x)
		copy(dst[i:], word[:])
	}
}

// matches reports the first offset at which got differs from the bytes
// name stands for, and false if it does not.
func matches(got, name []byte) (int, bool) {
	want := make([]byte, len(got))
	fill(want, name)
	for i := range got {
		if got[i] != want[i] {
			return i, false
		}
	}
	return 0, true
}
