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

// hostmem's memory is its own hold: Free is refused while any of its
// regions is registered through a binding, and succeeds once Close gave
// everything back.
func TestHostmemIsTheHold(t *testing.T) {
	mem, err := hostmem.Map(hostmem.Geometry{SlotBytes: lenderSlotBytes, SlotCount: 4, Regions: 2}, hostmem.Options{})
	require.NoError(t, err)
	b, err := Open(t.Context(), Loan{Regions: mem.Regions(), Hold: mem}, memdrv.New(memdrv.NewStore(), memdrv.Options{}), quietConfig)
	require.NoError(t, err)
	require.ErrorIs(t, mem.Free(), hostmem.ErrLent, "registered: refused, nothing unmapped")

	copy(mem.Slot(0, 0), bytes.Repeat([]byte{5}, lenderSlotBytes))
	a, err := b.Publish(rowsView(1), nil)
	require.NoError(t, err)
	<-a.Done()
	require.ErrorIs(t, mem.Free(), hostmem.ErrLent, "still registered after an attempt")

	require.NoError(t, b.Close(t.Context()))
	assert.True(t, mem.Released())
	require.NoError(t, mem.Free())
}

// After a hold kept for good, Free stays refused, and says why.
func TestHostmemKeptForGood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem, err := hostmem.Map(hostmem.Geometry{SlotBytes: lenderSlotBytes, SlotCount: 2}, hostmem.Options{})
		require.NoError(t, err)
		store := memdrv.NewStore()
		d := memdrv.New(store, memdrv.Options{})
		b, err := Open(context.Background(), Loan{Regions: mem.Regions(), Hold: mem}, d, quietConfig)
		require.NoError(t, err)
		store.Set(memKey(t, b, "n0"), bytes.Repeat([]byte{1}, lenderSlotBytes))
		d.UnprovableGets(memKey(t, b, "n0"))
		a, err := b.Fetch(rowsView(1), nil)
		require.NoError(t, err)
		_, err = a.Wait(context.Background())
		require.NoError(t, err)

		err = b.Close(context.Background())
		require.ErrorIs(t, err, ErrHeldForGood)
		mem.KeepForGood(err)
		err = mem.Free()
		require.ErrorIs(t, err, hostmem.ErrLent)
		assert.ErrorContains(t, err, "kept for good")
		assert.ErrorContains(t, err, "held for good")
		assert.False(t, mem.Released())
	})
}
