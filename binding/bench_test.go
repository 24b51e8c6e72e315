package binding

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kvshare/kvshare/contract"
)

// instantDriver admits every call and settles it inside Put/Get: every
// row Ready, access Ended, onChange called before Put/Get return. With
// settle false it leaves calls pending instead, for the test to settle
// later. It touches no memory: what a benchmark of it measures is the
// backend.
type instantDriver struct {
	settle      bool
	started     time.Time     // when the submission being timed began
	firstCall   time.Duration // from started to the first Put/Get since
	entered     bool
	ready       []contract.RowStatus // shared, read-only: n Ready rows
	pendingRows []contract.RowStatus // shared, read-only: n Pending rows
	pending     []*instantOp
}

type instantOp struct {
	d        *instantDriver
	n        int
	done     bool
	onChange func()
}

func newInstant(maxRows int, settle bool) *instantDriver {
	d := &instantDriver{settle: settle, ready: make([]contract.RowStatus, maxRows), pendingRows: make([]contract.RowStatus, maxRows)}
	for i := range d.ready {
		d.ready[i] = contract.Ready
	}
	return d
}

func (d *instantDriver) Capabilities() contract.Capabilities {
	return contract.Capabilities{Put: true, Get: true}
}
func (d *instantDriver) Register(contract.SlotRegion) (contract.Registration, error) { return 1, nil }
func (d *instantDriver) Unregister(contract.Registration) error                      { return nil }
func (d *instantDriver) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	return d.admit(b, onChange), nil
}
func (d *instantDriver) Get(b contract.RowBatch, _ contract.Hint, onChange func()) (contract.Operation, error) {
	return d.admit(b, onChange), nil
}
func (d *instantDriver) admit(b contract.RowBatch, onChange func()) *instantOp {
	if !d.entered {
		d.entered = true
		d.firstCall = time.Since(d.started)
	}
	op := &instantOp{d: d, n: len(b.Rows), done: d.settle, onChange: onChange}
	if d.settle {
		onChange()
	} else {
		d.pending = append(d.pending, op)
	}
	return op
}

// settleAll settles every pending call (the benchmark runs on one
// goroutine, so no lock is needed).
func (d *instantDriver) settleAll() {
	for _, op := range d.pending {
		op.done = true
		op.onChange()
	}
	d.pending = d.pending[:0]
}

func (d *instantDriver) Drain(context.Context) bool { return true }
func (d *instantDriver) Close() error               { return nil }

func (o *instantOp) Poll(dst []contract.RowStatus) contract.OpState {
	if !o.done {
		dst = append(dst[:0], o.d.pendingRows[:o.n]...)
		return contract.OpState{Rows: dst}
	}
	return contract.OpState{Rows: append(dst[:0], o.d.ready[:o.n]...), Access: contract.Ended}
}
func (o *instantOp) Cancel() {}

// benchView is n rows in region 0, named by 32-byte hashes as an engine
// names KV blocks.
func benchView(n int) contract.View {
	g := contract.Group{Slots: make([]int32, n), Names: make([][]byte, n)}
	for i := range n {
		g.Slots[i] = int32(i)
		var seed [8]byte
		binary.LittleEndian.PutUint64(seed[:], uint64(i))
		h := sha256.Sum256(seed[:])
		g.Names[i] = h[:]
	}
	return contract.View{Groups: []contract.Group{g}}
}

func benchBackend(b *testing.B, d contract.Driver, callRows int) *Backend {
	region := contract.SlotRegion{Base: 1 << 30, SlotBytes: 4096, SlotCount: 8192, Len: 4096 * 8192, Kind: contract.Host}
	r, err := Bind(d, []contract.SlotRegion{region}, &countingHold{})
	if err != nil {
		b.Fatal(err)
	}
	be, err := New(r, Config{KeyPrefix: "bench", MaxRowsPerCall: callRows, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	return be
}

// benchShapes are the submissions the goals name: 256 rows (one call)
// and 4096 rows in calls of 256.
var benchShapes = []struct {
	name           string
	rows, callRows int
}{
	{"rows=256", 256, 256},
	{"rows=4096/calls=256", 4096, 256},
}

// BenchmarkBackendPerRow is the backend's CPU per row over a driver that
// completes at once: validation, copying names, cutting, the call,
// recording and the outcome. Goal: at most 100 ns a row, and at most
// 2 KB and 12 allocations per 256-row submission (B/op, allocs/op).
func BenchmarkBackendPerRow(b *testing.B) {
	for _, dir := range []direction{fetch, publish} {
		for _, sh := range benchShapes {
			b.Run(fmt.Sprintf("%v/%s", dir, sh.name), func(b *testing.B) {
				be := benchBackend(b, newInstant(sh.rows, true), sh.callRows)
				v := benchView(sh.rows)
				b.ReportAllocs()
				for b.Loop() {
					var a contract.Attempt
					var err error
					if dir == fetch {
						a, err = be.Fetch(v, nil)
					} else {
						a, err = be.Publish(v, nil)
					}
					if err != nil {
						b.Fatal(err)
					}
					if !a.Quiesced() {
						b.Fatal("an instant driver left the attempt open")
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sh.rows), "ns/row")
			})
		}
	}
}

// BenchmarkSubmitLatency is how long Fetch takes to return (validation,
// cutting and handing every call over to a driver that admits them and
// settles them after Fetch returned), and how long after Fetch began the
// first call reached the driver. It reports the 50th and 99th percentile
// of each; ns/op includes the settling. Goals at p99: submit 20 µs for
// 256 rows and 150 µs for 4096 rows in 256-row calls; first call 20 µs
// at any size. The floor, measured in the same run: copying the view's
// names once, the least a backend that lends them to a driver must do.
func BenchmarkSubmitLatency(b *testing.B) {
	for _, sh := range benchShapes {
		b.Run(sh.name, func(b *testing.B) {
			d := newInstant(sh.rows, false)
			be := benchBackend(b, d, sh.callRows)
			v := benchView(sh.rows)
			var took, first []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				d.entered = false
				d.started = time.Now()
				_, err := be.Fetch(v, nil)
				took = append(took, time.Since(d.started))
				first = append(first, d.firstCall)
				if err != nil {
					b.Fatal(err)
				}
				d.settleAll() // timed in ns/op, not in the percentiles
			}
			p50, p99 := percentiles(took)
			f50, f99 := percentiles(first)
			b.ReportMetric(micros(p50), "p50-µs")
			b.ReportMetric(micros(p99), "p99-µs")
			b.ReportMetric(micros(f50), "first-p50-µs")
			b.ReportMetric(micros(f99), "first-p99-µs")
			floor := namesFloor(v, len(took))
			b.ReportMetric(micros(floor), "floor-p50-µs")
			b.ReportMetric(float64(p50)/float64(floor), "p50/floor")
		})
	}
}

// percentiles returns the 50th and 99th percentile of ds (sorting it).
func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	slices.Sort(ds)
	return ds[len(ds)/2], ds[len(ds)*99/100]
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// namesFloor is the median time of copying one view's names into a
// buffer, over n tries.
func namesFloor(v contract.View, n int) time.Duration {
	took := make([]time.Duration, 0, n)
	var buf []byte
	for range n {
		start := time.Now()
		buf = buf[:0]
		for _, g := range v.Groups {
			for _, name := range g.Names {
				buf = append(buf, name...)
			}
		}
		took = append(took, time.Since(start))
	}
	return percentile50(took)
}

func percentile50(ds []time.Duration) time.Duration {
	p50, _ := percentiles(ds)
	return p50
}

// BenchmarkValidate is the check of a whole fetch before its first call
// reaches the driver (slot range, name length, repeated slots): at 4096
// rows it is most of the time to the first driver call.
func BenchmarkValidate(b *testing.B) {
	for _, sh := range benchShapes {
		b.Run(sh.name, func(b *testing.B) {
			be := benchBackend(b, newInstant(sh.rows, true), sh.callRows)
			v := benchView(sh.rows)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := be.validate(fetch, v, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sh.rows), "ns/row")
		})
	}
}

// The submit path allocates nothing per row (docs/design/binding.md,
// section "The submit path"): an attempt's scratch comes from a pool and
// returns to it once the attempt has quiesced, so a view of 65536 rows
// allocates no more than one of 8.
// Scratch of a view over 65536 rows is dropped, so that one outlier
// pins no memory: such a view allocates its scratch anew every time.
func TestScratchIsPooledUpTo65536Rows(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops sync.Pool puts at random")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // a GC empties pools
	allocs := func(rows int) float64 {
		region := contract.SlotRegion{Base: 1 << 30, SlotBytes: 64, SlotCount: rows, Len: 64 * int64(rows), Kind: contract.Host}
		be := bindBackend(t, newInstant(rows, true), []contract.SlotRegion{region}, &countingHold{}, "t", Config{})
		v := rowsView(rows)
		// AllocsPerRun runs the function once before it counts.
		return testing.AllocsPerRun(5, func() {
			a, err := be.Publish(v, nil)
			if err != nil || !a.Quiesced() {
				t.Fatalf("publish of %d rows: %v, quiesced %v", rows, err, a != nil && a.Quiesced())
			}
		})
	}
	few := allocs(8)
	assert.Equal(t, few, allocs(maxPooledRows), "a view of 65536 rows reuses its scratch")
	assert.Greater(t, allocs(maxPooledRows+1), few, "scratch of a view over 65536 rows is not pooled")
}
