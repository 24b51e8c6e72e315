package scheduler_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/kvshare/kvshare/scheduler"
)

// BenchmarkDispatch measures what the pool costs per part: Submit, the
// choice of part, the wake-up of a worker and the return, around a run
// function that does nothing. Three parts in four are gets. batch=1
// waits for each part before submitting the next (the latency of one
// hand-over); batch=256 submits a burst and waits for all of it (the
// throughput of the queue). The figure to read is ns/part.
func BenchmarkDispatch(b *testing.B) {
	for _, workers := range []int{1, 4} {
		for _, batch := range []int{1, 256} {
			b.Run(fmt.Sprintf("workers=%d/batch=%d", workers, batch), func(b *testing.B) {
				var done sync.WaitGroup
				pool, err := scheduler.New(workers, func(int) { done.Done() })
				if err != nil {
					b.Fatal(err)
				}
				defer pool.Stop(context.Background())
				b.ReportAllocs()
				parts := 0
				for b.Loop() {
					done.Add(batch)
					for range batch {
						kind := scheduler.Get
						if parts%4 == 3 {
							kind = scheduler.Put
						}
						if err := pool.Submit(kind, parts); err != nil {
							b.Fatal(err)
						}
						parts++
					}
					done.Wait()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(parts), "ns/part")
			})
		}
	}
}
