package binding

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"log/slog"
	"testing"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// BenchmarkLookup is a lookup of one group of names, every one Present,
// through the backend and, for the floor, the same driver's Lookup
// called directly with the same key maker (which checks the names for
// repeats itself): ns/op over the two is the backend's share.
//
//	go test -run '^$' -bench Lookup -benchmem
func BenchmarkLookup(b *testing.B) {
	for _, n := range []int{1, 256, 4096} {
		store := memdrv.NewStore()
		drv := memdrv.New(store, memdrv.Options{Workers: 1, Logger: slog.New(slog.DiscardHandler)})
		be := memBackend(b, drv, newLender(b, 1, contract.Host, contract.Host), Config{})
		names := make([][]byte, n)
		for i := range names {
			var seed [8]byte
			binary.LittleEndian.PutUint64(seed[:], uint64(i))
			sum := sha256.Sum256(seed[:])
			names[i] = sum[:]
			store.Set(memKey(b, be, string(names[i])), []byte{1})
		}
		v := contract.View{Groups: []contract.Group{{Names: names}}}
		ctx := context.Background()
		b.Run(fmt.Sprintf("names=%d/backend", n), func(b *testing.B) {
			for b.Loop() {
				res, err := be.Lookup(ctx, v, LookupOptions{})
				if err != nil || res.Bound != n {
					b.Fatalf("bound %d of %d: %v", res.Bound, n, err)
				}
			}
		})
		b.Run(fmt.Sprintf("names=%d/driver", n), func(b *testing.B) {
			batch := contract.LookupBatch{Keys: be.keys, Names: names}
			dst := make([]contract.Presence, 0, n)
			for b.Loop() {
				var err error
				if dst, err = drv.Lookup(ctx, batch, dst); err != nil || len(dst) != n {
					b.Fatalf("%d answers of %d: %v", len(dst), n, err)
				}
			}
		})
	}
}
