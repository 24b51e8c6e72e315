package driverview_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/node/driverview"
)

// recycle is the view's Recycle, as binding's Reclaim calls it.
func (l *lend) recycle(ctx context.Context) error {
	return l.v.Driver().(contract.Recycler).Recycle(ctx)
}

// One recycle of the shared client, then each view's own: the views
// whose operations were all admitted before it answer nil without
// recycling again (their Unprovable operations read Ended already); a
// view that admitted an operation after it recycles for real, and that
// recycle covers the view that admitted nothing since.
func TestRecycleCoalescesAcrossViews(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memdrv.NewStore()
		d := memdrv.New(store, memdrv.Options{})
		sh := driverview.NewShared(d)
		a, b := lendOn(t, sh.View(), "a"), lendOn(t, sh.View(), "b")
		for _, k := range []string{a.key(0), b.key(0)} {
			store.Set(k, make([]byte, 64))
		}
		d.UnprovableGets(a.key(0), b.key(0))
		ua, ub := a.get(0), b.get(0)
		for _, o := range []*op{ua, ub} {
			require.Equal(t, contract.Unprovable, settled(t, o).Access)
		}

		require.NoError(t, sh.Recycle(context.Background()))
		require.Equal(t, 1, d.Recycles())
		synctest.Wait()
		require.NoError(t, a.recycle(context.Background()))
		require.NoError(t, b.recycle(context.Background()))
		assert.Equal(t, 1, d.Recycles(), "the views' recycles coalesced with the shared one")
		assert.Equal(t, contract.Ended, ua.Poll(nil).Access)
		assert.Equal(t, contract.Ended, ub.Poll(nil).Access)

		// An admission after the shared recycle: that view's recycle is
		// a real one, which then covers b (nothing admitted since).
		d.UnprovableGets(a.key(1))
		store.Set(a.key(1), make([]byte, 64))
		late := a.get(1)
		require.Equal(t, contract.Unprovable, settled(t, late).Access)
		require.NoError(t, a.recycle(context.Background()))
		assert.Equal(t, 2, d.Recycles(), "a's operation admitted after the shared recycle")
		assert.Equal(t, contract.Ended, late.Poll(nil).Access)
		require.NoError(t, b.recycle(context.Background()))
		assert.Equal(t, 2, d.Recycles(), "b admitted nothing since a's recycle")

		assert.True(t, a.v.Drain(context.Background()))
		assert.True(t, b.v.Drain(context.Background()))
	})
}

// A recycle that gave up covers nothing: a view's operation admitted
// before it still needs a recycle of its own, which then ends it.
func TestAFailedRecycleCoversNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memdrv.NewStore()
		d := memdrv.New(store, memdrv.Options{})
		sh := driverview.NewShared(d)
		a, b := lendOn(t, sh.View(), "a"), lendOn(t, sh.View(), "b")
		store.Set(a.key(0), make([]byte, 64))
		d.UnprovableGets(a.key(0))
		ua := a.get(0)
		require.Equal(t, contract.Unprovable, settled(t, ua).Access)

		gate := d.Hold(contract.PutDir)
		held := b.put(0)
		synctest.Wait()
		require.ErrorIs(t, sh.Recycle(endedCtx()), contract.ErrDriverRejected, "a row of b's is inside the store")
		assert.Equal(t, contract.Unprovable, ua.Poll(nil).Access)
		gate.Release()
		require.Equal(t, contract.Ended, settled(t, held).Access)

		before := d.Recycles()
		require.NoError(t, a.recycle(context.Background()))
		assert.Equal(t, before+1, d.Recycles(), "a's recycle was a real one")
		assert.Equal(t, contract.Ended, ua.Poll(nil).Access)
		assert.True(t, a.v.Drain(context.Background()))
		assert.True(t, b.v.Drain(context.Background()))
	})
}

// A shared driver that cannot recycle is refused, naming it.
func TestSharedRecycleOfANonRecycler(t *testing.T) {
	sh := driverview.NewShared(bare{memdrv.New(memdrv.NewStore(), memdrv.Options{})})
	err := sh.Recycle(context.Background())
	require.ErrorIs(t, err, contract.ErrDriverRejected)
	assert.Contains(t, err.Error(), "no contract.Recycler")
}
