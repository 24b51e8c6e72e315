package fakesdk

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkRoundTrip measures a put, an exists-check and a get of one
// part through the fake, with and without the 1 ms per-call latency the
// driver's benchmarks use.
func BenchmarkRoundTrip(b *testing.B) {
	for _, latency := range []time.Duration{0, time.Millisecond} {
		for _, rows := range []int{16, 256} {
			b.Run(fmt.Sprintf("latency=%v/rows=%d", latency, rows), func(b *testing.B) {
				const size = 4096
				st := New(Options{Latency: latency})
				c := st.Client()
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
				b.ResetTimer()
				for b.Loop() {
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
			})
		}
	}
}
