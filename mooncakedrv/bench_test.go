package mooncakedrv

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

// BenchmarkDriverPerRow is the driver's cost a row over a fake store
// that answers at once (its own cost included: compare with
// BenchmarkFakePerRow): admission, keys, parts, the SDK calls, verdicts
// and the callback, for 256-row calls of 4 KiB rows.
func BenchmarkDriverPerRow(b *testing.B) {
	for _, dir := range []contract.Direction{contract.PutDir, contract.GetDir} {
		b.Run(dir.String(), func(b *testing.B) {
			store := fakesdk.New(fakesdk.Options{})
			d, err := New(store.Client(), Config{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			const rows = 256
			mem := newMemory(b, rows, 4096)
			if _, err := d.Register(mem.region); err != nil {
				b.Fatal(err)
			}
			stem, _ := keys.NewStem("bench")
			batch := contract.RowBatch{Keys: stem, Rows: make([]contract.Row, rows)}
			for i := range batch.Rows {
				batch.Rows[i] = contract.Row{Name: fmt.Appendf(nil, "name-%04d", i), Spans: []contract.Span{mem.region.Slot(i)}}
			}
			if dir == contract.GetDir {
				for i := range rows {
					_, _ = store.Seed(batch.Key(i), make([]byte, 4096))
				}
			}
			done := make(chan struct{}, 1)
			onChange := func() {
				select {
				case done <- struct{}{}:
				default:
				}
			}
			dst := make([]contract.RowStatus, rows)
			b.ReportAllocs()
			for b.Loop() {
				var op contract.Operation
				if dir == contract.PutDir {
					op, err = d.Put(batch, onChange)
				} else {
					op, err = d.Get(batch, nil, onChange)
				}
				if err != nil {
					b.Fatal(err)
				}
				for op.Poll(dst).Access == contract.Open {
					<-done
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
		})
	}
}
