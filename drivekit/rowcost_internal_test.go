package drivekit

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// quiet is a store for the cost tests: every row Ready (an own write
// NotReady), nothing kept, no byte moved.
type quiet struct{}

func (quiet) Transfer(c *Call) {
	for i := range c.Keys {
		c.Ends[i].Status = contract.Ready
		if c.OwnWrite[i] {
			c.Ends[i].Status = contract.NotReady
		}
	}
}

// costRows is the batch size of the cost tests.
const costRows = 1024

// costRig is a driver over quiet with costRows slots registered at an
// address nothing maps, and a batch of costRows rows of 32-byte names.
func costRig(t testing.TB, reuse bool) (*Driver, contract.RowBatch) {
	t.Helper()
	region := contract.SlotRegion{Base: 1 << 40, Len: 64 * costRows, SlotBytes: 64, SlotCount: costRows, Kind: contract.Host}
	d, _, err := newRigWith(quiet{}, Options{Workers: 2, CallRows: 64, GetsFirst: true, ReuseKeys: reuse})
	require.NoError(t, err)
	_, err = d.Register(region)
	require.NoError(t, err)
	b := contract.RowBatch{Keys: plainKeys{}}
	for i := range costRows {
		b.Rows = append(b.Rows, contract.Row{Name: fmt.Appendf(nil, "row-cost/%025d", i), Spans: []contract.Span{region.Slot(i)}})
	}
	return d, b
}

// signal returns a channel and a callback that leaves a token in it
// (at most one waits).
func signal() (chan struct{}, func()) {
	changed := make(chan struct{}, 1)
	return changed, func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
}

// runOp admits b in dir and waits until its access left Open, every
// row Ready.
func runOp(t testing.TB, d *Driver, dir contract.Direction, b contract.RowBatch, changed chan struct{}, onChange func(), dst []contract.RowStatus) []contract.RowStatus {
	var op contract.Operation
	var err error
	if dir == contract.PutDir {
		op, err = d.Put(b, onChange)
	} else {
		op, err = d.Get(b, nil, onChange)
	}
	require.NoError(t, err)
	for {
		st := op.Poll(dst)
		dst = st.Rows
		if st.Access != contract.Open {
			require.Equal(t, contract.Ended, st.Access)
			break
		}
		<-changed
	}
	for i, s := range dst {
		if s != contract.Ready {
			require.Equal(t, contract.Ready, s, "row %d", i)
		}
	}
	return dst
}

// The kit's own cost per row stays off the heap: with ReuseKeys an
// operation whose rows all end alike allocates a few objects, whatever
// its rows; without, its fresh keys besides.
func TestRowCostStaysOffTheHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("measures allocation over many operations")
	}
	// 34-byte keys in one buffer of whole pages (40 bytes a row) and
	// their strings (16).
	freshKeys := float64(40 + 16)
	for _, tc := range []struct {
		reuse       bool
		bytesPerRow float64
		allocsPerOp float64
	}{
		// Every row ends Ready, so the status bytes go back with the
		// keys: what is left is the operation's objects, a third of a
		// byte a row, and maybe a Call a worker makes the first time
		// two run at once. A byte a row more fails.
		{reuse: true, bytesPerRow: 0.9, allocsPerOp: 4},
		// The fresh keys a batch besides.
		{reuse: false, bytesPerRow: freshKeys + 3.2, allocsPerOp: 6},
	} {
		for _, dir := range []contract.Direction{contract.PutDir, contract.GetDir} {
			t.Run(fmt.Sprintf("reuse %v %v", tc.reuse, dir), func(t *testing.T) {
				d, b := costRig(t, tc.reuse)
				changed, onChange := signal()
				dst := make([]contract.RowStatus, 0, costRows)
				for range 5 { // warm: pools and maps at size
					dst = runOp(t, d, dir, b, changed, onChange, dst)
				}
				defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no collection empties the pools meanwhile
				const ops = 20
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				for range ops {
					dst = runOp(t, d, dir, b, changed, onChange, dst)
				}
				runtime.ReadMemStats(&m1)
				perRow := float64(m1.TotalAlloc-m0.TotalAlloc) / (ops * costRows)
				perOp := float64(m1.Mallocs-m0.Mallocs) / ops
				t.Logf("%.2f bytes a row, %.1f allocations an operation", perRow, perOp)
				assert.LessOrEqual(t, perRow, tc.bytesPerRow, "bytes allocated a row")
				assert.LessOrEqual(t, perOp, tc.allocsPerOp, "allocations an operation")
			})
		}
	}
}

// BenchmarkRowCost is the kit's own cost of an operation of costRows
// rows over a store that moves nothing, per row: admission, keys, the
// put-key set, workers, records, Poll.
func BenchmarkRowCost(b *testing.B) {
	for _, dir := range []contract.Direction{contract.PutDir, contract.GetDir} {
		b.Run(dir.String(), func(b *testing.B) {
			d, batch := costRig(b, true)
			changed, onChange := signal()
			dst := make([]contract.RowStatus, 0, costRows)
			b.ReportAllocs()
			for b.Loop() {
				dst = runOp(b, d, dir, batch, changed, onChange, dst)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*costRows), "ns/row")
		})
	}
}
