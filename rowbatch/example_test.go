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
	keys := []string{"kv/a", "kv/b", "kv/a", "kv/c", "kv/d", "kv/e", "kv/f", "kv/g"}
	driver := rowbatch.Caps{MaxRows: 4}
	own := rowbatch.Caps{MaxBytes: 3 << 20}
	for c := range rowbatch.Cut(keys, 1<<20, own.Tighter(driver)) {
		fmt.Println(c.Start, c.End, keys[c.Start:c.End])
	}
	// Output:
	// 0 2 [kv/a kv/b]
	// 2 5 [kv/a kv/c kv/d]
	// 5 8 [kv/e kv/f kv/g]
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

	good := contract.RowBatch{Rows: []contract.Row{
		{Key: "kv/a", Spans: []contract.Span{region.Slot(0)}},
		{Key: "kv/b", Spans: []contract.Span{region.Slot(1)}},
	}}
	fmt.Println(rowbatch.Check(good, live, false))

	bad := contract.RowBatch{Rows: []contract.Row{
		{Key: "kv/a", Spans: []contract.Span{region.Slot(0)}},
		{Key: "kv/b", Spans: []contract.Span{region.Slot(4)}}, // one past the last slot
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
