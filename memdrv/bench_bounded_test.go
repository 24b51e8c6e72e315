package memdrv_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// BenchmarkBoundedPut measures one driver put of a row, waiting for it
// through its callback, with 64 rows' objects in the store: "evicting"
// puts into a full store of 64 rows, every put evicting the least
// recently used object; "room" puts into a store of twice that, each
// put after deleting the object put 64 puts earlier, so both copy into
// the memory of that object (the same working set, the same caches),
// and "room" pays a Delete where "evicting" pays the eviction. Compare
// the two of one size in one run: a put that evicts should cost at
// most 1.2 times one that does not.
func BenchmarkBoundedPut(b *testing.B) {
	const rows = 64
	for _, size := range []int64{64 << 10, 256 << 10} {
		for _, evicting := range []bool{false, true} {
			name := fmt.Sprintf("%dKiB/room", size>>10)
			if evicting {
				name = fmt.Sprintf("%dKiB/evicting", size>>10)
			}
			b.Run(name, func(b *testing.B) {
				capacity := 2 * rows * size
				if evicting {
					capacity = rows * size
				}
				s, err := memdrv.NewBoundedStore(memdrv.StoreOptions{Capacity: capacity, ChunkBytes: min(size, memdrv.DefaultChunkBytes)})
				require.NoError(b, err)
				d := memdrv.New(s, memdrv.Options{Workers: 1, Logger: quiet})
				src, err := memdrv.Alloc(size, 1, contract.Host)
				require.NoError(b, err)
				reg, err := d.Register(src.Region)
				require.NoError(b, err)
				put := func(key string) {
					st, err := settle(func(f func()) (contract.Operation, error) {
						return d.Put(batch(contract.Row{Name: []byte(key), Spans: []contract.Span{src.Region.Slot(0)}}), f)
					})
					if err != nil || st.Rows[0] != contract.Ready {
						b.Fatalf("put %s: %v %v", key, st.Rows, err)
					}
				}
				for i := range rows {
					put(fmt.Sprint(i - rows))
				}
				b.SetBytes(size)
				i := 0
				for b.Loop() {
					if !evicting {
						s.Delete(fmt.Sprint(i - rows))
					}
					put(fmt.Sprint(i))
					i++
				}
				b.StopTimer()
				if st := s.Stats(); evicting != (st.Evictions > 0) {
					b.Fatalf("evictions %d, want them only when evicting", st.Evictions)
				}
				require.NoError(b, d.Unregister(reg))
				require.NoError(b, src.Free())
				require.NoError(b, s.Close())
			})
		}
	}
}
