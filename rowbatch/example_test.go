package rowbatch_test

import (
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/rowbatch"
)

// A group of eight 1 MiB rows, cut for a driver that takes at most 4 rows
// a call under a backend cap of 3 MiB a call. The block named "a" appears
// twice, so its second row starts a new call.
func ExampleCut() {
	names := [][]byte{[]byte("a"), []byte("b"), []byte("a"), []byte("c"), []byte("d"), []byte("e"), []byte("f"), []byte("g")}
	driver := rowbatch.Caps{MaxRows: 4}
	own := rowbatch.Caps{MaxBytes: 3 << 20}
	for c := range rowbatch.Cut(names, 1<<20, own.Tighter(driver)) {
		fmt.Printf("%d %d %s\n", c.Start, c.End, names[c.Start:c.End])
	}
	// Output:
	// 0 2 [a b]
	// 2 5 [a c d]
	// 5 8 [e f g]
}

// Combining a driver's row cap with the backend's own caps.
func ExampleCaps_Tighter() {
	own := rowbatch.Caps{MaxRows: 512, MaxBytes: 128 << 20}
	driver := rowbatch.Caps{MaxRows: 256}
	caps := own.Tighter(driver)
	fmt.Println(caps.MaxRows, caps.MaxBytes>>20, "MiB")
	fmt.Println(caps.RowsPerCall(1<<20), "rows of 1 MiB per call")
	// Output:
	// 256 128 MiB
	// 128 rows of 1 MiB per call
}

// A driver checks each batch before it records anything, and refuses a
// bad one with ErrDriverRejected.
func ExampleCheck() {
	region := contract.SlotRegion{Base: 0x10000, SlotBytes: 4096, SlotCount: 4, Len: 4 * 4096, Kind: contract.Host}
	live := []contract.SlotRegion{region}

	stem := prefixKeys("kv/")
	good := contract.RowBatch{Keys: stem, Rows: []contract.Row{
		{Name: []byte("a"), Spans: []contract.Span{region.Slot(0)}},
		{Name: []byte("b"), Spans: []contract.Span{region.Slot(1)}},
	}}
	fmt.Println(rowbatch.Check(good, live, false))

	bad := contract.RowBatch{Keys: stem, Rows: []contract.Row{
		{Name: []byte("a"), Spans: []contract.Span{region.Slot(0)}},
		{Name: []byte("b"), Spans: []contract.Span{region.Slot(4)}}, // one past the last slot
	}}
	if err := rowbatch.Check(bad, live, false); err != nil {
		err = fmt.Errorf("%w: %w", contract.ErrDriverRejected, err)
		fmt.Println(err)
		fmt.Println(errors.Is(err, rowbatch.ErrBadBatch), errors.Is(err, contract.ErrDriverRejected))
	}
	// Output:
	// <nil>
	// kvshare: driver rejected: rowbatch: bad batch: row 1 (key "kv/b") span 0 [0x14000, 0x15000) lies in no live registration
	// true true
}

// prefixKeys is the examples' key maker: the prefix, then the name as it
// is (fine for names of letters; kvshare's binding uses keys.Stem).
type prefixKeys string

func (p prefixKeys) KeyLen(n int) int                  { return len(p) + n }
func (p prefixKeys) AppendKey(dst, name []byte) []byte { return append(append(dst, p...), name...) }

// A driver that checks many batches keeps a Checker, whose table of
// names serves batch after batch without allocating.
func ExampleChecker() {
	region := contract.SlotRegion{Base: 0x10000, SlotBytes: 4096, SlotCount: 4, Len: 4 * 4096, Kind: contract.Host}
	live := []contract.SlotRegion{region}
	var c rowbatch.Checker
	b := contract.RowBatch{Keys: prefixKeys("kv/"), Rows: []contract.Row{
		{Name: []byte("a"), Spans: []contract.Span{region.Slot(0)}},
		{Name: []byte("a"), Spans: []contract.Span{region.Slot(1)}},
	}}
	fmt.Println(c.Check(b, live, false))
	// Output:
	// rowbatch: bad batch: row 1 (key "kv/a"): name repeats row 0
}
