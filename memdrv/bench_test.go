package memdrv_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// BenchmarkRoundTrip measures one put and one get of a row of each size
// through two drivers sharing a store, waiting for each through its
// callback. The store's put never overwrites, so every put uses a fresh
// key; the store is reset between sizes.
func BenchmarkRoundTrip(b *testing.B) {
	for _, size := range []int64{4 << 10, 256 << 10, 4 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			s := memdrv.NewStore()
			pub := memdrv.New(s, memdrv.Options{Logger: quiet})
			fet := memdrv.New(s, memdrv.Options{Logger: quiet})
			src, err := memdrv.Alloc(size, 1, contract.Host)
			require.NoError(b, err)
			dst, err := memdrv.Alloc(size, 1, contract.Host)
			require.NoError(b, err)
			srcReg, err := pub.Register(src.Region)
			require.NoError(b, err)
			dstReg, err := fet.Register(dst.Region)
			require.NoError(b, err)
			b.SetBytes(2 * size)
			i := 0
			for b.Loop() {
				key := fmt.Sprint(i)
				i++
				put, err := settle(func(f func()) (contract.Operation, error) {
					return pub.Put(batch(contract.Row{Name: []byte(key), Spans: []contract.Span{src.Region.Slot(0)}}), f)
				})
				require.NoError(b, err)
				get, err := settle(func(f func()) (contract.Operation, error) {
					return fet.Get(batch(contract.Row{Name: []byte(key), Spans: []contract.Span{dst.Region.Slot(0)}}), nil, f)
				})
				require.NoError(b, err)
				if put.Rows[0] != contract.Ready || get.Rows[0] != contract.Ready {
					b.Fatalf("round trip %d: put %v, get %v", i, put.Rows[0], get.Rows[0])
				}
				s.Delete(key)
			}
			b.StopTimer()
			for _, end := range []struct {
				d   *memdrv.Driver
				reg contract.Registration
				mem *memdrv.Memory
			}{{pub, srcReg, src}, {fet, dstReg, dst}} {
				require.True(b, end.d.Drain(context.Background()))
				require.NoError(b, end.d.Unregister(end.reg))
				require.NoError(b, end.mem.Free())
			}
		})
	}
}
