package rowbatch_test

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/rowbatch"
)

// calls collects every call of a cut of rows named keys.
func calls(keys []string, rowBytes int64, caps rowbatch.Caps) []rowbatch.Call {
	return slices.Collect(rowbatch.Cut(names(keys), rowBytes, caps))
}

// names returns the names spelled by keys.
func names(keys []string) [][]byte {
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = []byte(k)
	}
	return out
}

// split returns the keys of a space-separated list.
func split(s string) []string { return strings.Fields(s) }

// numbered returns n distinct keys.
func numbered(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%d", i)
	}
	return keys
}

// cycle returns n keys repeating every period rows.
func cycle(n, period int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%d", i%period)
	}
	return keys
}

func cs(bounds ...int) []rowbatch.Call {
	var out []rowbatch.Call
	for i := 0; i+1 < len(bounds); i++ {
		out = append(out, rowbatch.Call{Start: bounds[i], End: bounds[i+1]})
	}
	return out
}

func TestCut(t *testing.T) {
	repeatLate := numbered(20)
	repeatLate = append(repeatLate, "key-3", "x")

	tests := []struct {
		name     string
		keys     []string
		rowBytes int64
		caps     rowbatch.Caps
		want     []rowbatch.Call // bounds of consecutive calls
	}{
		{name: "nil keys", keys: nil, rowBytes: 100},
		{name: "empty keys", keys: []string{}, rowBytes: 100, caps: rowbatch.Caps{MaxRows: 2}},
		{name: "one row", keys: split("a"), rowBytes: 100, want: cs(0, 1)},
		{name: "no caps", keys: numbered(100), rowBytes: 1 << 20, want: cs(0, 100)},
		{name: "row cap", keys: split("a b c d e"), rowBytes: 100, caps: rowbatch.Caps{MaxRows: 2}, want: cs(0, 2, 4, 5)},
		{name: "row cap of one", keys: split("a b c"), rowBytes: 100, caps: rowbatch.Caps{MaxRows: 1}, want: cs(0, 1, 2, 3)},
		{name: "row cap above the rows", keys: split("a b c"), rowBytes: 100, caps: rowbatch.Caps{MaxRows: 10}, want: cs(0, 3)},
		{name: "byte cap", keys: split("a b c d e"), rowBytes: 100, caps: rowbatch.Caps{MaxBytes: 250}, want: cs(0, 2, 4, 5)},
		{name: "byte cap met exactly", keys: split("a b c d e f g"), rowBytes: 100, caps: rowbatch.Caps{MaxBytes: 300}, want: cs(0, 3, 6, 7)},
		{name: "byte cap one short", keys: split("a b c d"), rowBytes: 100, caps: rowbatch.Caps{MaxBytes: 299}, want: cs(0, 2, 4)},
		{name: "row larger than the byte cap goes alone", keys: split("a b c"), rowBytes: 100, caps: rowbatch.Caps{MaxBytes: 50}, want: cs(0, 1, 2, 3)},
		{name: "row cap tighter than byte cap", keys: split("a b c d e"), rowBytes: 10, caps: rowbatch.Caps{MaxRows: 2, MaxBytes: 1000}, want: cs(0, 2, 4, 5)},
		{name: "byte cap tighter than row cap", keys: split("a b c d e"), rowBytes: 10, caps: rowbatch.Caps{MaxRows: 4, MaxBytes: 30}, want: cs(0, 3, 5)},
		{name: "repeated key", keys: split("a b a c"), rowBytes: 100, want: cs(0, 2, 4)},
		{name: "repeat of the previous row", keys: split("a a a"), rowBytes: 100, want: cs(0, 1, 2, 3)},
		{name: "repeat and cap together", keys: split("a b c a"), rowBytes: 100, caps: rowbatch.Caps{MaxRows: 3}, want: cs(0, 3, 4)},
		{name: "repeat in the next call is allowed", keys: split("a b a b"), rowBytes: 100, caps: rowbatch.Caps{MaxRows: 2}, want: cs(0, 2, 4)},
		{name: "repeat cuts before the cap", keys: split("a b b c d"), rowBytes: 100, caps: rowbatch.Caps{MaxRows: 3}, want: cs(0, 2, 5)},
		{name: "repeat far into a long call", keys: repeatLate, rowBytes: 100, want: cs(0, 20, 22)},
		{name: "long calls of a cycle", keys: cycle(30, 10), rowBytes: 100, want: cs(0, 10, 20, 30)},
		{name: "long cycle under a cap", keys: cycle(40, 12), rowBytes: 100, caps: rowbatch.Caps{MaxRows: 10}, want: cs(0, 10, 20, 30, 40)},
		{name: "long cycle past a cap", keys: cycle(40, 12), rowBytes: 100, caps: rowbatch.Caps{MaxRows: 15}, want: cs(0, 12, 24, 36, 40)},
		{name: "empty keys repeat too", keys: []string{"", "", "a"}, rowBytes: 100, want: cs(0, 1, 3)},
		{name: "negative caps bound nothing", keys: split("a b c"), rowBytes: 100, caps: rowbatch.Caps{MaxRows: -1, MaxBytes: -1}, want: cs(0, 3)},
		{name: "zero row length ignores the byte cap", keys: split("a b c"), rowBytes: 0, caps: rowbatch.Caps{MaxBytes: 1}, want: cs(0, 3)},
		{name: "negative row length ignores the byte cap", keys: split("a b c"), rowBytes: -5, caps: rowbatch.Caps{MaxBytes: 1}, want: cs(0, 3)},
		{name: "huge rows", keys: split("a b"), rowBytes: 1 << 62, caps: rowbatch.Caps{MaxBytes: 1<<63 - 1}, want: cs(0, 1, 2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := calls(tt.keys, tt.rowBytes, tt.caps)
			assert.Equal(t, tt.want, got)
			checkCut(t, tt.keys, tt.rowBytes, tt.caps, got)
		})
	}
}

func TestCutStopsWhenTheRangeBreaks(t *testing.T) {
	keys := numbered(10)
	caps := rowbatch.Caps{MaxRows: 3}
	var seen []rowbatch.Call
	for c := range rowbatch.Cut(names(keys), 1, caps) {
		seen = append(seen, c)
		if len(seen) == 2 {
			break
		}
	}
	assert.Equal(t, cs(0, 3, 6), seen)

	// The sequence cuts anew on every range.
	assert.Equal(t, cs(0, 3, 6, 9, 10), calls(keys, 1, caps))
	assert.Equal(t, cs(0, 3, 6, 9, 10), calls(keys, 1, caps))
}

func TestCutAgainstTheRules(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		n := rng.IntN(300)
		alphabet := 1 + rng.IntN(400)
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("kvshare/v1/%x", rng.IntN(alphabet))
		}
		caps := rowbatch.Caps{MaxRows: rng.IntN(40) - 5, MaxBytes: rng.Int64N(5000) - 500}
		rowBytes := rng.Int64N(300) - 20
		checkCut(t, keys, rowBytes, caps, calls(keys, rowBytes, caps))
		if t.Failed() {
			t.Logf("keys %q, rowBytes %d, caps %+v", keys, rowBytes, caps)
			return
		}
	}
}

func TestCutAllocations(t *testing.T) {
	keys := names(benchKeys(4096, 0))
	tests := []struct {
		name string
		caps rowbatch.Caps
		want float64
	}{
		{name: "calls of 8 rows", caps: rowbatch.Caps{MaxRows: 8}, want: 0},
		{name: "calls of 8 rows by bytes", caps: rowbatch.Caps{MaxBytes: 8 << 20}, want: 0},
		{name: "calls of 256 rows", caps: rowbatch.Caps{MaxRows: 256}, want: 1},
		{name: "one call", caps: rowbatch.Caps{}, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := 0
			allocs := testing.AllocsPerRun(20, func() {
				for c := range rowbatch.Cut(keys, 1<<20, tt.caps) {
					rows += c.Len()
				}
			})
			require.Positive(t, rows)
			assert.Equal(t, tt.want, allocs)
		})
	}
}

// A Cutter keeps its table: cutting group after group, of any length up
// to the longest it has cut, allocates nothing, and gives the calls Cut
// gives.
func TestCutterReusesItsTable(t *testing.T) {
	long := names(benchKeys(4096, 64))
	var c rowbatch.Cutter
	caps := rowbatch.Caps{MaxRows: 256}
	cutAll := func(g [][]byte) (out []rowbatch.Call) {
		c.Reset(g, 1<<20, caps)
		for {
			call, ok := c.Next()
			if !ok {
				return out
			}
			out = append(out, call)
		}
	}
	groups := [][][]byte{long, long[:300], long[1000:1100], long[5:9], names(cycle(600, 40)), long}
	for i, g := range groups {
		assert.Equal(t, slices.Collect(rowbatch.Cut(g, 1<<20, caps)), cutAll(g), "group %d", i)
	}
	allocs := testing.AllocsPerRun(20, func() {
		for _, g := range groups {
			c.Reset(g, 1<<20, caps)
			for {
				if _, ok := c.Next(); !ok {
					break
				}
			}
		}
	})
	assert.Zero(t, allocs)
}

// checkCut asserts that calls is the cut of keys the rules call for: the
// calls cover every row once, in order and contiguously; no call repeats
// a key or passes a cap unless it is a single row; and every call but the
// last ended only because its next row would break a rule. It compares
// plainly and asserts only what fails, so that fuzzing stays fast.
func checkCut(t *testing.T, keys []string, rowBytes int64, caps rowbatch.Caps, calls []rowbatch.Call) {
	t.Helper()
	held := make(map[string]int)
	next := 0
	for i, c := range calls {
		if c.Start != next || c.End <= c.Start || c.End > len(keys) {
			assert.Failf(t, "calls not contiguous", "call %d is %+v; the previous one ended at %d, the rows at %d", i, c, next, len(keys))
			return
		}
		if c.Len() != c.End-c.Start {
			assert.Failf(t, "wrong length", "call %d %+v has Len %d", i, c, c.Len())
		}
		clear(held)
		for r := c.Start; r < c.End; r++ {
			if j, dup := held[keys[r]]; dup {
				assert.Failf(t, "key repeated in a call", "call %d: row %d repeats row %d (key %q)", i, r, j, keys[r])
			}
			held[keys[r]] = r
		}
		if c.Len() > 1 && (overRows(c.Len(), caps) || overBytes(c.Len(), rowBytes, caps)) {
			assert.Failf(t, "call over a cap", "call %d has %d rows of %d bytes, caps %+v", i, c.Len(), rowBytes, caps)
		}
		if c.End < len(keys) {
			_, dup := held[keys[c.End]]
			grown := c.Len() + 1
			if !dup && !overRows(grown, caps) && !overBytes(grown, rowBytes, caps) {
				assert.Failf(t, "call not maximal", "call %d %+v ended though row %d (key %q) fits", i, c, c.End, keys[c.End])
			}
		}
		next = c.End
	}
	assert.Equal(t, len(keys), next, "rows covered")
}

// overRows reports whether n rows break the row cap.
func overRows(n int, caps rowbatch.Caps) bool { return caps.MaxRows > 0 && n > caps.MaxRows }

// overBytes reports whether n rows of rowBytes break the byte cap,
// computing n*rowBytes in 128 bits so that nothing overflows.
func overBytes(n int, rowBytes int64, caps rowbatch.Caps) bool {
	if caps.MaxBytes <= 0 || rowBytes <= 0 {
		return false
	}
	hi, lo := bits.Mul64(uint64(n), uint64(rowBytes))
	return hi != 0 || lo > uint64(caps.MaxBytes)
}
