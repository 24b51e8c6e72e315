package binding

import (
	"bytes"
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/memdrv"
)

// A loan of hostmem's memory takes a hold of its own: Free is refused
// while any of its regions is registered through a binding, and succeeds
// once Close gave everything back.
func TestHostmemIsTheHold(t *testing.T) {
	mem, err := hostmem.Map(hostmem.Geometry{SlotBytes: lenderSlotBytes, SlotCount: 4, Regions: 2}, hostmem.Options{})
	require.NoError(t, err)
	hold, err := mem.Hold()
	require.NoError(t, err)
	b, err := Open(t.Context(), Loan{Regions: mem.Regions(), Hold: hold}, memdrv.New(memdrv.NewStore(), memdrv.Options{}), quietConfig)
	require.NoError(t, err)
	require.ErrorIs(t, mem.Free(), hostmem.ErrLent, "registered: refused, nothing unmapped")

	copy(mem.Slot(0, 0), bytes.Repeat([]byte{5}, lenderSlotBytes))
	a, err := b.Publish(rowsView(1), nil)
	require.NoError(t, err)
	<-a.Done()
	require.ErrorIs(t, mem.Free(), hostmem.ErrLent, "still registered after an attempt")

	require.NoError(t, b.Close(t.Context()))
	assert.True(t, hold.Released())
	require.NoError(t, mem.Free())
}

// One Memory lent to two backends: each loan takes its own hold, so Free
// is refused after the first backend's Close, while the second's driver
// still has the memory registered, and allowed after the second's.
func TestOneMemoryLentToTwoBackends(t *testing.T) {
	mem, err := hostmem.Map(hostmem.Geometry{SlotBytes: lenderSlotBytes, SlotCount: 4}, hostmem.Options{})
	require.NoError(t, err)
	store := memdrv.NewStore()
	var backends []*Backend
	for range 2 {
		hold, err := mem.Hold()
		require.NoError(t, err)
		b, err := Open(t.Context(), Loan{Regions: mem.Regions(), Hold: hold}, memdrv.New(store, memdrv.Options{}), quietConfig)
		require.NoError(t, err)
		backends = append(backends, b)
	}
	require.NoError(t, backends[0].Close(t.Context()))
	require.ErrorIs(t, mem.Free(), hostmem.ErrLent, "the second backend's driver still has the region registered")
	copy(mem.Slot(0, 0), bytes.Repeat([]byte{5}, lenderSlotBytes)) // still mapped
	a, err := backends[1].Publish(rowsView(1), nil)
	require.NoError(t, err)
	waitFor(t, a.Done(), "the second backend's publish")
	require.NoError(t, backends[1].Close(t.Context()))
	require.NoError(t, mem.Free())
}

// After a hold kept for good, Free stays refused, and says why.
func TestHostmemKeptForGood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem, err := hostmem.Map(hostmem.Geometry{SlotBytes: lenderSlotBytes, SlotCount: 2}, hostmem.Options{})
		require.NoError(t, err)
		store := memdrv.NewStore()
		d := memdrv.New(store, memdrv.Options{})
		hold, err := mem.Hold()
		require.NoError(t, err)
		b, err := Open(context.Background(), Loan{Regions: mem.Regions(), Hold: hold}, d, quietConfig)
		require.NoError(t, err)
		store.Set(memKey(t, b, "n0"), bytes.Repeat([]byte{1}, lenderSlotBytes))
		d.UnprovableGets(memKey(t, b, "n0"))
		a, err := b.Fetch(rowsView(1), nil)
		require.NoError(t, err)
		_, err = a.Wait(context.Background())
		require.NoError(t, err)

		err = b.Close(context.Background())
		require.ErrorIs(t, err, ErrHeldForGood)
		hold.KeepForGood(err)
		err = mem.Free()
		require.ErrorIs(t, err, hostmem.ErrLent)
		assert.ErrorContains(t, err, "kept for good")
		assert.ErrorContains(t, err, "held for good")
		assert.False(t, hold.Released())
	})
}
