package rowbatch_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/rowbatch"
)

// Regions of the Check tests: two slot regions, the second with padding
// past its slots, and a third that starts exactly where the first ends.
var (
	first    = contract.SlotRegion{Base: 0x10000, SlotBytes: 0x100, SlotCount: 4, Len: 0x400, Kind: contract.Host}
	padded   = contract.SlotRegion{Base: 0x20000, SlotBytes: 0x100, SlotCount: 2, Len: 0x280, Kind: contract.Host}
	adjacent = contract.SlotRegion{Base: 0x10400, SlotBytes: 0x100, SlotCount: 1, Len: 0x100, Kind: contract.Host}
)

func span(addr uintptr, n int64) contract.Span { return contract.Span{Addr: addr, Len: n} }

// row builds a row named name with the given spans.
func row(name string, spans ...contract.Span) contract.Row {
	return contract.Row{Name: []byte(name), Spans: spans}
}

// plainKeys is the tests' key maker: "kv/" and the name as it is, for
// names of 1 to 64 bytes (the tests' names hold no NUL). Longer names
// have no key.
type plainKeys struct{}

func (plainKeys) KeyLen(n int) int {
	if n < 1 || n > 64 {
		return 0
	}
	return 3 + n
}

func (k plainKeys) AppendKey(dst, name []byte) []byte {
	if k.KeyLen(len(name)) == 0 {
		return dst
	}
	return append(append(dst, "kv/"...), name...)
}

// batchOf is a batch of rows under plainKeys.
func batchOf(rows []contract.Row) contract.RowBatch {
	return contract.RowBatch{Keys: plainKeys{}, Rows: rows}
}

// distinctRows returns n rows with keys k0, k1, ..., each one slot of
// first, cycling through its slots.
func distinctRows(n int) []contract.Row {
	rows := make([]contract.Row, n)
	for i := range rows {
		rows[i] = row(fmt.Sprintf("k%d", i), first.Slot(i%first.SlotCount))
	}
	return rows
}

func TestCheckRefusesBadBatches(t *testing.T) {
	live := []contract.SlotRegion{first, padded}
	slot := first.Slot(0)
	firstEnd := first.Base + uintptr(first.Len)

	manyRepeat := distinctRows(40)
	manyRepeat[37].Name = manyRepeat[5].Name

	tests := []struct {
		name      string
		rows      []contract.Row
		live      []contract.SlotRegion
		multiSpan bool
		want      []string // every one must appear in the error
	}{
		{name: "no rows", rows: nil, want: []string{"no rows"}},
		{name: "empty rows", rows: []contract.Row{}, want: []string{"no rows"}},
		{name: "empty name", rows: []contract.Row{row("a", slot), row("", first.Slot(1))},
			want: []string{"row 1", "empty name"}},
		{name: "repeated name", rows: []contract.Row{row("a", slot), row("b", first.Slot(1)), row("a", first.Slot(2))},
			want: []string{"row 2", `key "kv/a"`, "repeats row 0"}},
		{name: "repeated name past 32 rows", rows: manyRepeat,
			want: []string{"row 37", `key "kv/k5"`, "repeats row 5"}},
		{name: "adjacent rows repeat", rows: []contract.Row{row("a", slot), row("a", slot)},
			want: []string{"row 1", `key "kv/a"`, "repeats row 0"}},
		{name: "no span", rows: []contract.Row{row("a", slot), row("b")},
			want: []string{"row 1", `key "kv/b"`, "no span"}},
		{name: "empty span list", rows: []contract.Row{{Name: []byte("a"), Spans: []contract.Span{}}},
			want: []string{"row 0", `key "kv/a"`, "no span"}},
		{name: "two spans without multiSpan", rows: []contract.Row{row("a", slot, first.Slot(1))},
			want: []string{"row 0", `key "kv/a"`, "2 spans"}},
		{name: "zero span length", rows: []contract.Row{row("a", span(first.Base, 0))},
			want: []string{"row 0", `key "kv/a"`, "span 0", "length 0"}},
		{name: "negative span length", rows: []contract.Row{row("a", span(first.Base, -1))},
			want: []string{"row 0", `key "kv/a"`, "span 0", "length -1"}},
		{name: "bad second span", rows: []contract.Row{row("a", slot, span(first.Base, 0))}, multiSpan: true,
			want: []string{"row 0", `key "kv/a"`, "span 1", "length 0"}},
		{name: "span outside every registration", rows: []contract.Row{row("a", span(0x30000, 0x100))},
			want: []string{"row 0", `key "kv/a"`, "span 0", "[0x30000, 0x30100)", "no live registration"}},
		{name: "span before a region", rows: []contract.Row{row("a", span(first.Base-0x10, 0x100))},
			want: []string{"row 0", `key "kv/a"`, "span 0", "[0xfff0, 0x100f0)"}},
		{name: "span straddling a region end", rows: []contract.Row{row("a", span(firstEnd-0x80, 0x100))},
			want: []string{"row 0", `key "kv/a"`, "span 0", "[0x10380, 0x10480)"}},
		{name: "span straddling two adjacent regions", rows: []contract.Row{row("a", span(firstEnd-0x80, 0x100))},
			live: []contract.SlotRegion{first, adjacent},
			want: []string{"row 0", `key "kv/a"`, "span 0", "no live registration"}},
		{name: "span starting at a region end", rows: []contract.Row{row("a", span(firstEnd, 1))},
			want: []string{"row 0", `key "kv/a"`, "span 0", "[0x10400, 0x10401)"}},
		{name: "span past the padding", rows: []contract.Row{row("a", span(padded.Base+0x200, 0x100))},
			want: []string{"row 0", `key "kv/a"`, "span 0"}},
		{name: "span wrapping the address space", rows: []contract.Row{row("a", span(first.Base, math.MaxInt64))},
			want: []string{"row 0", `key "kv/a"`, "span 0"}},
		{name: "span near the top of the address space", rows: []contract.Row{row("a", span(^uintptr(0)-0x10, 0x100))},
			want: []string{"row 0", `key "kv/a"`, "span 0"}},
		{name: "no live registration", rows: []contract.Row{row("a", slot)}, live: []contract.SlotRegion{},
			want: []string{"row 0", `key "kv/a"`, "span 0", "no live registration"}},
		{name: "name without a key", rows: []contract.Row{row("a", slot), row(string(make([]byte, 65)), first.Slot(1))},
			want: []string{"row 1", "no key for a name of 65 bytes"}},
		{name: "later row at fault", rows: []contract.Row{row("a", slot), row("b", first.Slot(1)), row("c", span(0x30000, 1))},
			want: []string{"row 2", `key "kv/c"`, "span 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			regions := live
			if tt.live != nil {
				regions = tt.live
			}
			err := rowbatch.Check(batchOf(tt.rows), regions, tt.multiSpan)
			require.Error(t, err)
			assert.ErrorIs(t, err, rowbatch.ErrBadBatch)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestCheckAcceptsGoodBatches(t *testing.T) {
	live := []contract.SlotRegion{first, padded, adjacent}
	firstEnd := first.Base + uintptr(first.Len)

	tests := []struct {
		name      string
		rows      []contract.Row
		multiSpan bool
	}{
		{name: "one row", rows: []contract.Row{row("a", first.Slot(0))}},
		{name: "every slot", rows: distinctRows(first.SlotCount)},
		{name: "40 distinct rows", rows: distinctRows(40)},
		{name: "span exactly at a region end", rows: []contract.Row{row("a", span(firstEnd-0x100, 0x100))}},
		{name: "whole region", rows: []contract.Row{row("a", span(first.Base, first.Len))}},
		{name: "one byte at region start", rows: []contract.Row{row("a", span(first.Base, 1))}},
		{name: "span in the padding", rows: []contract.Row{row("a", span(padded.Base+0x200, 0x80))}},
		{name: "rows in several regions", rows: []contract.Row{row("a", first.Slot(3)), row("b", padded.Slot(1)), row("c", adjacent.Slot(0))}},
		{name: "several spans with multiSpan", multiSpan: true,
			rows: []contract.Row{row("a", first.Slot(0), padded.Slot(0)), row("b", adjacent.Slot(0))}},
		{name: "one span with multiSpan", multiSpan: true, rows: []contract.Row{row("a", first.Slot(0))}},
		{name: "names alike but for case", rows: []contract.Row{row("a", first.Slot(0)), row("A", first.Slot(1))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.NoError(t, rowbatch.Check(batchOf(tt.rows), live, tt.multiSpan))
		})
	}
}

func TestCheckRefusesABatchWithoutKeyMaker(t *testing.T) {
	err := rowbatch.Check(contract.RowBatch{Rows: distinctRows(2)}, []contract.SlotRegion{first}, false)
	require.ErrorIs(t, err, rowbatch.ErrBadBatch)
	assert.Contains(t, err.Error(), "no key maker")
}

func TestCheckAllocatesOnlyForLargeBatches(t *testing.T) {
	live := []contract.SlotRegion{first}
	small := batchOf(distinctRows(8))
	allocs := testing.AllocsPerRun(10, func() {
		if err := rowbatch.Check(small, live, false); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs, "a batch of 8 rows")
}

func TestCheckerAllocatesNothingOnceGrown(t *testing.T) {
	live := []contract.SlotRegion{first}
	var c rowbatch.Checker
	for _, n := range []int{256, 40, 256, 9} {
		b := batchOf(distinctRows(n))
		require.NoError(t, c.Check(b, live, false))
		allocs := testing.AllocsPerRun(10, func() {
			if err := c.Check(b, live, false); err != nil {
				t.Fatal(err)
			}
		})
		assert.Zero(t, allocs, "a batch of %d rows after one of 256", n)
	}
	// A repeat is still found after the table served longer batches.
	rows := distinctRows(30)
	rows[29].Name = rows[11].Name
	err := c.Check(batchOf(rows), live, false)
	require.ErrorIs(t, err, rowbatch.ErrBadBatch)
	assert.Contains(t, err.Error(), "row 29 (key \"kv/k11\"): name repeats row 11")
}
