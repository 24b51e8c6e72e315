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

// row builds a row with the given spans.
func row(key string, spans ...contract.Span) contract.Row {
	return contract.Row{Key: key, Spans: spans}
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
	manyRepeat[37].Key = manyRepeat[5].Key

	tests := []struct {
		name      string
		rows      []contract.Row
		live      []contract.SlotRegion
		multiSpan bool
		want      []string // every one must appear in the error
	}{
		{name: "no rows", rows: nil, want: []string{"no rows"}},
		{name: "empty rows", rows: []contract.Row{}, want: []string{"no rows"}},
		{name: "empty key", rows: []contract.Row{row("a", slot), row("", first.Slot(1))},
			want: []string{"row 1", "empty key"}},
		{name: "repeated key", rows: []contract.Row{row("a", slot), row("b", first.Slot(1)), row("a", first.Slot(2))},
			want: []string{"row 2", `key "a"`, "repeats row 0"}},
		{name: "repeated key past 32 rows", rows: manyRepeat,
			want: []string{"row 37", `key "k5"`, "repeats row 5"}},
		{name: "adjacent rows repeat", rows: []contract.Row{row("a", slot), row("a", slot)},
			want: []string{"row 1", `key "a"`, "repeats row 0"}},
		{name: "no span", rows: []contract.Row{row("a", slot), row("b")},
			want: []string{"row 1", `key "b"`, "no span"}},
		{name: "empty span list", rows: []contract.Row{{Key: "a", Spans: []contract.Span{}}},
			want: []string{"row 0", `key "a"`, "no span"}},
		{name: "two spans without multiSpan", rows: []contract.Row{row("a", slot, first.Slot(1))},
			want: []string{"row 0", `key "a"`, "2 spans"}},
		{name: "zero span length", rows: []contract.Row{row("a", span(first.Base, 0))},
			want: []string{"row 0", `key "a"`, "span 0", "length 0"}},
		{name: "negative span length", rows: []contract.Row{row("a", span(first.Base, -1))},
			want: []string{"row 0", `key "a"`, "span 0", "length -1"}},
		{name: "bad second span", rows: []contract.Row{row("a", slot, span(first.Base, 0))}, multiSpan: true,
			want: []string{"row 0", `key "a"`, "span 1", "length 0"}},
		{name: "span outside every registration", rows: []contract.Row{row("a", span(0x30000, 0x100))},
			want: []string{"row 0", `key "a"`, "span 0", "[0x30000, 0x30100)", "no live registration"}},
		{name: "span before a region", rows: []contract.Row{row("a", span(first.Base-0x10, 0x100))},
			want: []string{"row 0", `key "a"`, "span 0", "[0xfff0, 0x100f0)"}},
		{name: "span straddling a region end", rows: []contract.Row{row("a", span(firstEnd-0x80, 0x100))},
			want: []string{"row 0", `key "a"`, "span 0", "[0x10380, 0x10480)"}},
		{name: "span straddling two adjacent regions", rows: []contract.Row{row("a", span(firstEnd-0x80, 0x100))},
			live: []contract.SlotRegion{first, adjacent},
			want: []string{"row 0", `key "a"`, "span 0", "no live registration"}},
		{name: "span starting at a region end", rows: []contract.Row{row("a", span(firstEnd, 1))},
			want: []string{"row 0", `key "a"`, "span 0", "[0x10400, 0x10401)"}},
		{name: "span past the padding", rows: []contract.Row{row("a", span(padded.Base+0x200, 0x100))},
			want: []string{"row 0", `key "a"`, "span 0"}},
		{name: "span wrapping the address space", rows: []contract.Row{row("a", span(first.Base, math.MaxInt64))},
			want: []string{"row 0", `key "a"`, "span 0"}},
		{name: "span near the top of the address space", rows: []contract.Row{row("a", span(^uintptr(0)-0x10, 0x100))},
			want: []string{"row 0", `key "a"`, "span 0"}},
		{name: "no live registration", rows: []contract.Row{row("a", slot)}, live: []contract.SlotRegion{},
			want: []string{"row 0", `key "a"`, "span 0", "no live registration"}},
		{name: "later row at fault", rows: []contract.Row{row("a", slot), row("b", first.Slot(1)), row("c", span(0x30000, 1))},
			want: []string{"row 2", `key "c"`, "span 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			regions := live
			if tt.live != nil {
				regions = tt.live
			}
			err := rowbatch.Check(contract.RowBatch{Rows: tt.rows}, regions, tt.multiSpan)
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
		{name: "keys alike but for case", rows: []contract.Row{row("a", first.Slot(0)), row("A", first.Slot(1))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.NoError(t, rowbatch.Check(contract.RowBatch{Rows: tt.rows}, live, tt.multiSpan))
		})
	}
}

func TestCheckAllocatesOnlyForLargeBatches(t *testing.T) {
	live := []contract.SlotRegion{first}
	small := contract.RowBatch{Rows: distinctRows(32)}
	allocs := testing.AllocsPerRun(10, func() {
		if err := rowbatch.Check(small, live, false); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs, "a batch of 32 rows")
}
