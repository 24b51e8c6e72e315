package binding

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// unprovableFetch builds a memdrv backend over a lender and fetches
// rows n0..n3 (stored), in calls of two rows, with n3's get left
// unprovable: its transfer runs on until FinishStrays.
func unprovableFetch(t *testing.T, cfg Config) (*memdrv.Driver, *lender, *Backend, contract.Attempt) {
	t.Helper()
	store := memdrv.NewStore()
	d := memdrv.New(store, memdrv.Options{})
	l := newLender(t, 16, contract.Host, contract.Host)
	cfg.MaxRowsPerCall = 2
	b := memBackend(t, d, l, cfg)
	for i := range 4 {
		store.Set(memKey(t, b, fmt.Sprintf("n%d", i)), bytes.Repeat([]byte{1}, lenderSlotBytes))
	}
	d.UnprovableGets(memKey(t, b, "n3"))
	a, err := b.Fetch(rowsView(4), nil)
	require.NoError(t, err)
	synctest.Wait()
	if cfg.ReclaimAbove == 0 {
		require.False(t, a.Quiesced())
		require.EqualValues(t, 1, b.Stats().CallsUnprovable)
	}
	return d, l, b, a
}

func TestReclaimGivesBackWhatWasHeldForGood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, l, b, a := unprovableFetch(t, Config{})
		err := b.Close(context.Background())
		require.ErrorIs(t, err, ErrHeldForGood, "before the reclaim: held for good")

		got, err := b.Reclaim(context.Background())
		require.NoError(t, err)
		assert.Equal(t, Reclaimed{Calls: 1, Rows: 2, Bytes: 2 * lenderSlotBytes}, got)
		synctest.Wait()
		assert.True(t, a.Quiesced(), "the attempt quiesced once its last call was given back")
		st := b.Stats()
		assert.Zero(t, st.CallsUnprovable)
		assert.Zero(t, st.RowsLent)
		assert.Zero(t, st.BytesLent)
		assert.EqualValues(t, 1, st.Reclaims)
		assert.EqualValues(t, 1, st.CallsReclaimed)
		assert.EqualValues(t, 2*lenderSlotBytes, st.BytesReclaimed)
		assert.Contains(t, st.String(), "reclaims 1 (1 calls, 512 B given back)")

		// The slot of the unprovable row: fenced, then the store's
		// abandoned transfer may run to its end; nothing lands.
		slot := l.mems[0].Slot(3)
		for i := range slot {
			slot[i] = 0x77
		}
		assert.Zero(t, d.FinishStrays(), "the recycle tore the transfer down")
		assert.Equal(t, bytes.Repeat([]byte{0x77}, lenderSlotBytes), slot)

		require.NoError(t, b.Close(context.Background()), "Close finishes what it could not")
		assert.Equal(t, 1, l.Released())
		assert.Equal(t, 1, d.Recycles())
	})
}

func TestReclaimAfterShutdownFinishesIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, l, b, _ := unprovableFetch(t, Config{})
		assert.Equal(t, []string{"attempt 1 (fetch)", "region 0", "region 1"}, b.Shutdown(context.Background()))
		_, err := b.Reclaim(context.Background())
		require.NoError(t, err)
		assert.Nil(t, b.Shutdown(context.Background()), "the retiring goroutine went on after the reclaim")
		<-b.Closed()
		assert.Equal(t, 1, l.Released())
	})
}

func TestReclaimAbove(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, _, b, a := unprovableFetch(t, Config{ReclaimAbove: 2 * lenderSlotBytes})
		synctest.Wait()
		assert.True(t, a.Quiesced(), "the backend reclaimed by itself once the held bytes reached ReclaimAbove")
		assert.EqualValues(t, 1, b.Stats().Reclaims)
		require.NoError(t, b.Close(context.Background()))
	})
}

func TestReclaimBelowTheThresholdWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, _, b, a := unprovableFetch(t, Config{ReclaimAbove: 2*lenderSlotBytes + 1})
		synctest.Wait()
		assert.False(t, a.Quiesced())
		assert.Zero(t, b.Stats().Reclaims)
		_, err := b.Reclaim(context.Background())
		require.NoError(t, err)
		require.NoError(t, b.Close(context.Background()))
	})
}

func TestReclaimWhileARowIsInsideTheStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, _, b, a := unprovableFetch(t, Config{})
		gate := d.Hold(memdrv.PutDir)
		v := rowsView(1)
		v.Groups[0].Slots[0] = 8
		p, err := b.Publish(v, nil)
		require.NoError(t, err)
		require.NoError(t, gate.Held(context.Background()))

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		got, err := b.Reclaim(ctx)
		require.ErrorIs(t, err, contract.ErrDriverRejected, "the row held inside the store outlived the context")
		assert.Zero(t, got.Calls)
		assert.False(t, a.Quiesced())
		assert.EqualValues(t, 1, b.Stats().CallsUnprovable)

		gate.Release()
		synctest.Wait()
		assert.True(t, p.Quiesced())
		got, err = b.Reclaim(context.Background())
		require.NoError(t, err)
		assert.EqualValues(t, 1, got.Calls)
		require.NoError(t, b.Close(context.Background()))
	})
}

// noRecycle hides memdrv's Recycle.
type noRecycle struct{ contract.Driver }

func TestReclaimNeedsARecycler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
		l := newLender(t, 4, contract.Host)
		b := memBackend(t, noRecycle{d}, l, Config{})
		_, err := b.Reclaim(context.Background())
		require.ErrorIs(t, err, ErrNotRecyclable)
		require.NoError(t, b.Close(context.Background()))
		require.NoError(t, d.Close())
	})
}

func TestReclaimConfigRefusals(t *testing.T) {
	for name, c := range map[string]struct {
		cfg     Config
		recycle bool
		want    string
	}{
		"negative threshold": {Config{ReclaimAbove: -1}, true, "ReclaimAbove is -1"},
		"negative wait":      {Config{ReclaimWait: -time.Second}, true, "ReclaimWait is -1s"},
		"no recycler":        {Config{ReclaimAbove: 1}, false, "is no contract.Recycler"},
	} {
		t.Run(name, func(t *testing.T) {
			var d contract.Driver = memdrv.New(memdrv.NewStore(), memdrv.Options{})
			if !c.recycle {
				d = noRecycle{d}
			}
			l := newLender(t, 4, contract.Host)
			r, err := Bind(d, l.Regions(), l)
			require.NoError(t, err)
			_, err = New(r, c.cfg)
			require.ErrorIs(t, err, ErrConfig)
			assert.Contains(t, err.Error(), c.want)
			require.NoError(t, r.Unbind(context.Background()))
		})
	}
}

// recycleSaysNil answers nil and ends nothing.
type recycleSaysNil struct{ *memdrv.Driver }

func (recycleSaysNil) Recycle(context.Context) error { return nil }

func TestReclaimOverARecycleThatEndsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memdrv.NewStore()
		d := memdrv.New(store, memdrv.Options{})
		l := newLender(t, 4, contract.Host)
		b := memBackend(t, recycleSaysNil{d}, l, Config{})
		store.Set(memKey(t, b, "n0"), bytes.Repeat([]byte{1}, lenderSlotBytes))
		d.UnprovableGets(memKey(t, b, "n0"))
		a, err := b.Fetch(rowsView(1), nil)
		require.NoError(t, err)
		synctest.Wait()

		got, err := b.Reclaim(context.Background())
		require.NoError(t, err)
		assert.Zero(t, got.Calls, "nothing given back: the access still reads unprovable")
		assert.Contains(t, b.Stats().Violation, "access not Ended after a Recycle")
		assert.False(t, a.Quiesced())
		_, err = b.Reclaim(context.Background())
		assert.ErrorIs(t, err, ErrNotRecyclable, "a driver that broke the protocol is not asked again")
	})
}
