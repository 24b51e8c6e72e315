package binding

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
)

// instantDriver admits every call and settles it inside Put/Get: every
// row Ready, access Ended, onChange called before Put/Get return. With
// settle false it leaves calls pending instead, for the test to settle
// later. It touches no memory: what a benchmark of it measures is the
// backend.
type instantDriver struct {
	settle  bool
	ready   []contract.RowStatus // shared, read-only snapshot of n Ready rows
	pending []*instantOp
}

type instantOp struct {
	d        *instantDriver
	n        int
	done     bool
	onChange func()
}

func newInstant(maxRows int, settle bool) *instantDriver {
	d := &instantDriver{settle: settle, ready: make([]contract.RowStatus, maxRows)}
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

func (o *instantOp) Poll() contract.OpState {
	if !o.done {
		return contract.OpState{Rows: make([]contract.RowStatus, o.n)}
	}
	return contract.OpState{Rows: o.d.ready[:o.n], Access: contract.Ended}
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

func benchBackend(b *testing.B, d contract.Driver) *Backend {
	region := contract.SlotRegion{Base: 1 << 30, SlotBytes: 4096, SlotCount: 8192, Len: 4096 * 8192, Kind: contract.Host}
	r, err := Bind(d, []contract.SlotRegion{region}, &countingHold{})
	if err != nil {
		b.Fatal(err)
	}
	be, err := New(r, Config{KeyPrefix: "bench", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	return be
}

// BenchmarkBackendPerRow is the backend's overhead per row over a driver
// that completes at once: validation, keys, cutting, the call, recording
// and the outcome. Target: at most 200 ns/row.
func BenchmarkBackendPerRow(b *testing.B) {
	for _, dir := range []direction{fetch, publish} {
		for _, rows := range []int{256, 4096} {
			b.Run(fmt.Sprintf("%v/rows=%d", dir, rows), func(b *testing.B) {
				be := benchBackend(b, newInstant(rows, true))
				v := benchView(rows)
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
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
			})
		}
	}
}

// BenchmarkSubmitLatency is how long Fetch takes to return: validation,
// keys, cutting and the handover of the calls to a driver that admits
// them and settles them after Fetch returned. It reports the 50th and
// 99th percentile of Fetch alone; ns/op includes the settling. Targets
// at p99: 20 µs for 256 rows, 150 µs for 4096.
func BenchmarkSubmitLatency(b *testing.B) {
	for _, rows := range []int{256, 4096} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			d := newInstant(rows, false)
			be := benchBackend(b, d)
			v := benchView(rows)
			var took []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				_, err := be.Fetch(v, nil)
				took = append(took, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				d.settleAll() // timed in ns/op, not in the percentiles
			}
			slices.Sort(took)
			p50, p99 := took[len(took)/2], took[len(took)*99/100]
			b.ReportMetric(float64(p50.Nanoseconds())/1e3, "p50-µs")
			b.ReportMetric(float64(p99.Nanoseconds())/1e3, "p99-µs")
			// The floor, measured in the same run on the same machine:
			// building the view's keys, which any backend must do.
			floor := keyFloor(b, v, len(took))
			b.ReportMetric(float64(floor)/1e3, "floor-p50-µs")
			b.ReportMetric(float64(p50)/float64(floor), "p50/floor")
		})
	}
}

// keyFloor is the median time of building one view's keys with
// keys.Stem.Keys, over n tries: the floor of any submission's cost.
func keyFloor(b *testing.B, v contract.View, n int) time.Duration {
	stem, err := keys.NewStem("bench")
	if err != nil {
		b.Fatal(err)
	}
	took := make([]time.Duration, 0, n)
	var dst []string
	for range n {
		start := time.Now()
		for _, g := range v.Groups {
			if dst, err = stem.Keys(dst[:0], g.Names); err != nil {
				b.Fatal(err)
			}
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	return took[len(took)/2]
}
