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
					return pub.Put(batch(contract.Row{Name: []byte(key), Spans: []contract.Span{src.Region.Slot(c)}}), f)
				})
				if !assert.NoError(t, err) || !assert.Equal(t, statuses(contract.Ready), put.Rows, key) {
					return
				}
				get, err := settle(func(f func()) (contract.Operation, error) {
					return fet.Get(batch(contract.Row{Name: []byte(key), Spans: []contract.Span{dst.Region.Slot(c)}}), nil, f)
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

// TestGetsNeverSeeAPartObject races gets of one key against a driver
// that keeps putting it (and the store dropping it), with real
// goroutines: every object is exactly one slot of one byte value, so a
// get that saw an object before it was whole would end Fault or land
// mixed bytes. Each get must end Ready with one whole version in its
// slot, or Miss or NotReady with its slot untouched.
func TestGetsNeverSeeAPartObject(t *testing.T) {
	const versions, getters, rounds = 4, 3, 300
	s := memdrv.NewStore()
	pub := memdrv.New(s, memdrv.Options{Workers: 2, Logger: quiet})
	fet := memdrv.New(s, memdrv.Options{Workers: 2, Logger: quiet})
	src, _ := register(t, pub, 512, versions)
	dst, _ := register(t, fet, 512, getters)
	for v := range versions {
		for i := range src.Slot(v) {
			src.Slot(v)[i] = byte(v + 1)
		}
	}

	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for r := range rounds {
			st, err := settle(func(f func()) (contract.Operation, error) {
				return pub.Put(batch(contract.Row{Name: []byte("k"), Spans: []contract.Span{src.Region.Slot(r % versions)}}), f)
			})
			if !assert.NoError(t, err) || !assert.Equal(t, statuses(contract.Ready), st.Rows, "put %d", r) {
				return
			}
			s.Delete("k")
		}
	})
	seen := make([][contract.RowStatusCount]int, getters)
	for g := range getters {
		wg.Go(func() {
			slot := dst.Slot(g)
			for {
				select {
				case <-done:
					return
				default:
				}
				for i := range slot {
					slot[i] = fillByte
				}
				st, err := settle(func(f func()) (contract.Operation, error) {
					return fet.Get(batch(contract.Row{Name: []byte("k"), Spans: []contract.Span{dst.Region.Slot(g)}}), nil, f)
				})
				if !assert.NoError(t, err) {
					return
				}
				seen[g][st.Rows[0]]++
				switch st.Rows[0] {
				case contract.Ready:
					v := slot[0]
					if !assert.True(t, v >= 1 && v <= versions && bytes.Count(slot, []byte{v}) == len(slot),
						"getter %d: a Ready slot holds one whole version", g) {
						return
					}
				case contract.Miss, contract.NotReady:
					if !assert.True(t, untouched(slot), "getter %d: a %v slot is untouched", g, st.Rows[0]) {
						return
					}
				default:
					assert.Fail(t, "a get saw a part object", "getter %d: %v", g, st.Rows[0])
					return
				}
			}
		})
	}
	wg.Wait()
	t.Logf("verdicts seen by each getter (by status): %v", seen)
	for _, d := range []*memdrv.Driver{pub, fet} {
		require.True(t, d.Drain(context.Background()))
	}
}
