package lender_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/lender"
	"github.com/kvshare/kvshare/memdrv"
)

// unprovableFetch publishes one row, then fetches it with its get held
// as unprovable: the fetch's slots stay lent until a recycle.
func unprovableFetch(t *testing.T, md *memdrv.Driver, l *lender.Lender) contract.Attempt {
	t.Helper()
	ctx := bounded(t, "the publish")
	v := view("stray", 1)
	a, err := l.Publish(v, nil)
	require.NoError(t, err)
	_, err = contract.Settle(ctx, a)
	require.NoError(t, err)
	key, err := l.Key(v.Groups[0].Names[0])
	require.NoError(t, err)
	md.UnprovableGets(key)
	a, err = l.Fetch(v, nil)
	require.NoError(t, err)
	_, err = a.Wait(ctx)
	require.NoError(t, err)
	require.False(t, a.Quiesced(), "a get held as unprovable keeps its slots lent")
	return a
}

// Close reclaims the calls held as unprovable when the driver can
// recycle, and then gives everything back.
func TestCloseReclaimsWhatItCan(t *testing.T) {
	before := hostmem.Totals().MappedNow
	md := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	l, err := lender.Lend(t.Context(), md, lender.Options{Geometry: geometry()})
	require.NoError(t, err)
	a := unprovableFetch(t, md, l)

	require.NoError(t, l.Close(bounded(t, "Close")))
	assert.True(t, a.Quiesced())
	assert.Equal(t, 1, md.Recycles())
	assert.Equal(t, before, hostmem.Totals().MappedNow)
}

// A driver that cannot recycle leaves the unprovable calls lent: Close
// keeps the memory for good and says what and why, every time.
func TestCloseKeepsWhatNoOneCanReclaim(t *testing.T) {
	before := hostmem.Totals().MappedNow
	md := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	l, err := lender.Lend(t.Context(), &watched{Driver: md}, lender.Options{Geometry: geometry()})
	require.NoError(t, err)
	unprovableFetch(t, md, l)

	err = l.Close(bounded(t, "Close"))
	var kept *lender.Kept
	require.ErrorAs(t, err, &kept)
	require.ErrorIs(t, err, lender.ErrKept)
	require.ErrorIs(t, err, binding.ErrHeldForGood)
	assert.Contains(t, kept.Held, "attempt 2 (fetch)")
	assert.Equal(t, int64(1), kept.RowsLent)
	assert.Equal(t, int64(slotBytes), kept.BytesLent)
	assert.Equal(t, int64(slotBytes*slots), kept.Mapped)
	assert.Equal(t, before+kept.Mapped, hostmem.Totals().MappedNow, "kept memory stays mapped")
	require.ErrorIs(t, l.Memory().Free(), hostmem.ErrLent, "kept memory can never be freed")
	assert.Same(t, kept, l.Close(t.Context()), "every later Close reports the same")
	md.FinishStrays() // the stray lands in memory that is still mapped
}

// Close within a context that ends first frees nothing and can be
// called again; several Closes at once each get the same answer.
func TestCloseAgainAfterTimeRanOut(t *testing.T) {
	before := hostmem.Totals().MappedNow
	md := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	gate := md.Hold(memdrv.PutDir)
	l, err := lender.Lend(t.Context(), md, lender.Options{Geometry: geometry()})
	require.NoError(t, err)
	_, err = l.Publish(view("held", 2), nil)
	require.NoError(t, err)
	require.NoError(t, gate.Held(bounded(t, "the put reaching the store")))

	ended, cancel := context.WithCancel(t.Context())
	cancel()
	err = l.Close(ended)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, lender.ErrKept)
	var held *binding.HeldError
	require.ErrorAs(t, err, &held)
	assert.NotPanics(t, func() { _ = l.Slot(0, 1) }, "the memory is still mapped")

	gate.Release()
	ctx := bounded(t, "Close after the put")
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = l.Close(ctx) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, before, hostmem.Totals().MappedNow)
}
