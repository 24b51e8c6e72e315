package rowbatch_test

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/kvshare/kvshare/contract"

	"github.com/kvshare/kvshare/rowbatch"
)

// benchKeys returns n names shaped like an engine's: 32-byte block
// hashes (as strings, for the tests' helpers). With every > 0, each
// every-th name repeats the name half a window earlier, so calls end at
// repeated names too.
func benchKeys(n, every int) []string {
	keys := make([]string, n)
	for i := range keys {
		var name [8]byte
		binary.LittleEndian.PutUint64(name[:], uint64(i))
		sum := sha256.Sum256(name[:])
		keys[i] = string(sum[:])
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
			keys := names(benchKeys(rows, sh.every))
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

// BenchmarkCheck measures the admission check of one 256-row batch of
// 32-byte names in one region, in ns per row: with a Checker kept from
// batch to batch (what a driver does), and with Check, which builds its
// table anew each time.
func BenchmarkCheck(b *testing.B) {
	const rows = 256
	region := contract.SlotRegion{Base: 1 << 30, SlotBytes: 1 << 16, SlotCount: rows, Len: rows << 16, Kind: contract.Host}
	live := []contract.SlotRegion{region}
	ns := names(benchKeys(rows, 0))
	batch := contract.RowBatch{Keys: plainKeys{}, Rows: make([]contract.Row, rows)}
	spans := make([]contract.Span, rows)
	for i := range batch.Rows {
		spans[i] = region.Slot(i)
		batch.Rows[i] = contract.Row{Name: ns[i], Spans: spans[i : i+1]}
	}
	var c rowbatch.Checker
	for _, kept := range []bool{true, false} {
		b.Run(fmt.Sprintf("checker=%v", kept), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if kept {
					err = c.Check(batch, live, false)
				} else {
					err = rowbatch.Check(batch, live, false)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
		})
	}
}
