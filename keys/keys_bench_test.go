package keys

import (
	"crypto/sha256"
	"encoding/binary"
	"testing"
)

// benchNames returns n names of 32 bytes each, shaped like the token-hash
// names a lease holder sends.
func benchNames(n int) [][]byte {
	names := make([][]byte, n)
	for i := range names {
		var seed [8]byte
		binary.LittleEndian.PutUint64(seed[:], uint64(i))
		sum := sha256.Sum256(seed[:])
		names[i] = sum[:]
	}
	return names
}

// BenchmarkKeys builds the keys of one call of 256 names of 32 bytes into
// a reused dst: one allocation per call, the key buffer.
func BenchmarkKeys(b *testing.B) {
	stem := mustStem(b, "kvshare/llama-3.1-8b/tp2_rank0")
	names := benchNames(256)
	dst := make([]string, 0, len(names))
	b.SetBytes(int64(len(names) * stem.KeyLen(32)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		dst, err = stem.Keys(dst[:0], names)
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKeyEach builds the same 256 keys one Key call at a time, for
// comparison with the batch form.
func BenchmarkKeyEach(b *testing.B) {
	stem := mustStem(b, "kvshare/llama-3.1-8b/tp2_rank0")
	names := benchNames(256)
	dst := make([]string, len(names))
	b.SetBytes(int64(len(names) * stem.KeyLen(32)))
	b.ReportAllocs()
	for b.Loop() {
		for i, name := range names {
			key, err := stem.Key(name)
			if err != nil {
				b.Fatal(err)
			}
			dst[i] = key
		}
	}
}
