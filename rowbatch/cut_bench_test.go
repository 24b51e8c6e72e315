package rowbatch_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/kvshare/kvshare/rowbatch"
)

// benchKeys returns n keys shaped like the backend's: a stem and the hex
// of a 32-byte block hash. With every > 0, each every-th key repeats the
// key half a window earlier, so calls end at repeated keys too.
func benchKeys(n, every int) []string {
	keys := make([]string, n)
	for i := range keys {
		var name [8]byte
		binary.LittleEndian.PutUint64(name[:], uint64(i))
		sum := sha256.Sum256(name[:])
		keys[i] = "kvshare/v1/" + hex.EncodeToString(sum[:])
		if every > 0 && i%every == every-1 {
			keys[i] = keys[i-every/2]
		}
	}
	return keys
}

// BenchmarkCut measures cutting one group, in ns per row, for the shapes
// the backend meets: no cap at all (the whole group is one call), the
// Mooncake driver's parts (256 rows, 128 MiB of 1 MiB rows), a tight row
// cap, and keys that repeat.
func BenchmarkCut(b *testing.B) {
	const mib = 1 << 20
	shapes := []struct {
		name  string
		caps  rowbatch.Caps
		every int
	}{
		{"nocap", rowbatch.Caps{}, 0},
		{"mooncake", rowbatch.Caps{MaxRows: 256, MaxBytes: 128 * mib}, 0},
		{"rows8", rowbatch.Caps{MaxRows: 8}, 0},
		{"repeats", rowbatch.Caps{}, 64},
	}
	for _, rows := range []int{256, 4096} {
		for _, sh := range shapes {
			keys := benchKeys(rows, sh.every)
			b.Run(fmt.Sprintf("rows=%d/%s", rows, sh.name), func(b *testing.B) {
				b.ReportAllocs()
				calls := 0
				for b.Loop() {
					for c := range rowbatch.Cut(keys, mib, sh.caps) {
						calls += c.Len()
					}
				}
				if calls != b.N*rows {
					b.Fatalf("cut covered %d rows in %d ranges, want %d", calls, b.N, b.N*rows)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
			})
		}
	}
}
