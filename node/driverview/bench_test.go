package driverview_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/node/driverview"
)

// BenchmarkPublish publishes a view of 64 rows of 4 KiB, in calls of 16
// rows, through a binding over memdrv directly and over a view of it:
// what the view's bookkeeping costs a publish.
func BenchmarkPublish(b *testing.B) {
	for _, through := range []string{"direct", "view"} {
		b.Run(through, func(b *testing.B) {
			const rows = 64
			d := memdrv.New(memdrv.NewStore(), memdrv.Options{Workers: 2})
			var drv contract.Driver = d
			if through == "view" {
				drv = driverview.New(d).Driver()
			}
			mem, err := memdrv.Alloc(4096, rows, contract.Host)
			if err != nil {
				b.Fatal(err)
			}
			be, err := binding.Open(context.Background(), binding.Loan{Regions: []contract.SlotRegion{mem.Region}, Hold: nopHold{}},
				drv, binding.Config{KeyPrefix: "bench", MaxRowsPerCall: 16, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			v := contract.View{Groups: []contract.Group{{}}}
			for i := range rows {
				v.Groups[0].Slots = append(v.Groups[0].Slots, int32(i))
				v.Groups[0].Names = append(v.Groups[0].Names, fmt.Appendf(nil, "row-%d", i))
			}
			b.SetBytes(rows * 4096)
			b.ResetTimer()
			for b.Loop() {
				a, err := be.Publish(v, nil)
				if err != nil {
					b.Fatal(err)
				}
				<-a.Done()
			}
			b.StopTimer()
			if err := be.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
			if through == "view" {
				d.Drain(context.Background())
				_ = d.Close()
			}
			_ = mem.Free()
		})
	}
}
