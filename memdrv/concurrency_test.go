package memdrv_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// TestConcurrentEndpoints runs many callers against two drivers sharing a
// store, with real goroutines (no bubble), for the race detector: each
// caller publishes from its own slot and fetches into its own slot of the
// other driver's region, and every fetched block must equal the
// published one.
func TestConcurrentEndpoints(t *testing.T) {
	const callers, rounds = 8, 25
	s := memdrv.NewStore()
	pub := memdrv.New(s, memdrv.Options{Workers: 3, Logger: quiet})
	fet := memdrv.New(s, memdrv.Options{Workers: 2, Logger: quiet})
	src, srcReg := register(t, pub, 256, callers)
	dst, dstReg := register(t, fet, 256, callers)

	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for r := range rounds {
				key := fmt.Sprintf("caller-%d/round-%d", c, r)
				want := src.Slot(c)
				for i := range want {
					want[i] = byte(c*31 + r*7 + i)
				}
				put, err := settle(func(f func()) (contract.Operation, error) {
					return pub.Put(batch(contract.Row{Key: key, Spans: []contract.Span{src.Region.Slot(c)}}), f)
				})
				if !assert.NoError(t, err) || !assert.Equal(t, statuses(contract.Ready), put.Rows, key) {
					return
				}
				get, err := settle(func(f func()) (contract.Operation, error) {
					return fet.Get(batch(contract.Row{Key: key, Spans: []contract.Span{dst.Region.Slot(c)}}), nil, f)
				})
				if !assert.NoError(t, err) || !assert.Equal(t, statuses(contract.Ready), get.Rows, key) {
					return
				}
				assert.True(t, bytes.Equal(want, dst.Slot(c)), key)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, callers*rounds, s.Len())
	for _, end := range []struct {
		d   *memdrv.Driver
		reg contract.Registration
	}{{pub, srcReg}, {fet, dstReg}} {
		require.True(t, end.d.Drain(context.Background()))
		require.NoError(t, end.d.Unregister(end.reg))
		require.NoError(t, end.d.Close())
	}
}
