package fakesdk

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkRoundTrip measures a put, an exists-check and a get of one
// part through the fake, with and without the 1 ms per-call latency the
// driver's benchmarks use. Each round trip runs on a fresh store, so its
// put stores every row (a put of a key already stored moves nothing) and
// both directions move the bytes SetBytes counts.
func BenchmarkRoundTrip(b *testing.B) {
	for _, latency := range []time.Duration{0, time.Millisecond} {
		for _, rows := range []int{16, 256} {
			b.Run(fmt.Sprintf("latency=%v/rows=%d", latency, rows), func(b *testing.B) {
				const size = 4096
				s := newSlab(b, 2*rows, size)
				keys := make([]string, rows)
				for i := range keys {
					keys[i] = fmt.Sprintf("bench/%d", i)
				}
				putSlots := make([]int, rows)
				getSlots := make([]int, rows)
				for i := range rows {
					putSlots[i], getSlots[i] = i, rows+i
				}
				puts, gets := s.addrs(putSlots...), s.addrs(getSlots...)
				sizes := s.sizes(rows)
				res := make([]int64, rows)
				ex := make([]int32, rows)
				b.SetBytes(int64(2 * rows * size))
				for b.Loop() {
					c := New(Options{Latency: latency}).Client()
					if err := c.BatchPutFrom(keys, puts, sizes, res); err != nil {
						b.Fatal(err)
					}
					if err := c.BatchIsExist(keys, ex); err != nil {
						b.Fatal(err)
					}
					if err := c.BatchGetInto(keys, gets, sizes, res); err != nil {
						b.Fatal(err)
					}
				}
				if ex[rows-1] != 1 || res[rows-1] != size {
					b.Fatalf("the round trip did not complete: exist %d, get %d", ex[rows-1], res[rows-1])
				}
			})
		}
	}
}
