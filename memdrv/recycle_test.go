package memdrv_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// unprovable has the fixture get "u" (stored) into slot 4 with its
// transfer left running: the operation ends Fault, Unprovable.
func (f *fixture) unprovable(onChange func()) contract.Operation {
	f.t.Helper()
	f.store.Set("u", pattern(slotBytes, 1))
	f.d.UnprovableGets("u")
	op, err := f.d.Get(batch(f.row(4, "u")), nil, onChange)
	require.NoError(f.t, err)
	synctest.Wait()
	require.Equal(f.t, contract.Unprovable, op.Poll(nil).Access)
	return op
}

func TestAStrayTransferWritesWhenItFinishes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		f.keep()
		f.unprovable(nil)
		assert.True(t, untouched(f.mem.Slot(4)), "nothing written while the transfer runs")
		assert.Equal(t, 1, f.d.FinishStrays())
		assert.Equal(t, pattern(slotBytes, 1), f.mem.Slot(4), "the transfer the store gave up on landed its object")
		assert.Zero(t, f.d.FinishStrays(), "once")
	})
}

func TestRecycleEndsUnprovableAccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		var calls counter
		op := f.unprovable(calls.inc)
		before := calls.get()
		require.False(t, f.d.Drain(t.Context()), "unprovable: Drain answers false")

		require.NoError(t, f.d.Recycle(t.Context()))
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Fault), Access: contract.Ended}, op.Poll(nil))
		assert.Greater(t, calls.get(), before, "onChange was called for the change, before Recycle returned")
		assert.Zero(t, f.d.Unprovable())
		assert.Equal(t, 1, f.d.Recycles())
		assert.Zero(t, f.d.FinishStrays(), "the transfer was torn down")
		assert.True(t, untouched(f.mem.Slot(4)), "and wrote nothing")

		_, err := f.d.Get(batch(f.row(0, "u")), nil, nil)
		assert.ErrorIs(t, err, contract.ErrDriverRejected, "a Drain before the Recycle still stops work")
		f.teardown()
	})
}

func TestRecycleTakesWorkAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		f.unprovable(nil)
		require.NoError(t, f.d.Recycle(t.Context()))
		want := f.write(1, 7)
		f.put(f.row(1, "fresh"))
		synctest.Wait() // the put is stored before the get asks (two workers would race them)
		got := f.get(f.row(2, "fresh"))
		synctest.Wait()
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Ready), Access: contract.Ended}, got.Poll(nil))
		assert.Equal(t, want, f.mem.Slot(2))
		f.teardown()
	})
}

func TestRecycleWaitsForRowsInsideTheStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		unprovable := f.unprovable(nil)
		g := f.d.Hold(memdrv.PutDir)
		f.write(0, 3)
		held := f.put(f.row(0, "held"))
		synctest.Wait()

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		err := f.d.Recycle(ctx)
		require.ErrorIs(t, err, contract.ErrDriverRejected, "a row inside the store outlived the context")
		assert.Contains(t, err.Error(), "nothing torn down")
		assert.Equal(t, contract.Unprovable, unprovable.Poll(nil).Access, "no access changed")
		assert.Equal(t, contract.Open, held.Poll(nil).Access)
		assert.Equal(t, 1, f.d.FinishStrays(), "the stray still runs")

		done := make(chan error, 1)
		go func() { done <- f.d.Recycle(t.Context()) }()
		synctest.Wait()
		for _, call := range []func() error{
			func() error { _, err := f.d.Put(batch(f.row(1, "x")), nil); return err },
			func() error { _, err := f.d.Get(batch(f.row(1, "x")), nil, nil); return err },
			func() error { return f.d.Unregister(f.reg) },
		} {
			assert.ErrorIs(t, call(), contract.ErrDriverRejected, "refused while Recycle runs")
		}
		g.Release()
		require.NoError(t, <-done)
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Ready), Access: contract.Ended}, held.Poll(nil), "the held row kept its own verdict")
		assert.Equal(t, contract.Ended, unprovable.Poll(nil).Access)
		f.teardown()
	})
}

func TestRecycleCancelsQueuedRows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		resume := f.d.Pause()
		defer resume()
		queued := f.get(f.row(3, "q"))
		require.NoError(t, f.d.Recycle(t.Context()))
		synctest.Wait()
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Cancelled), Access: contract.Ended}, queued.Poll(nil))
		assert.True(t, untouched(f.mem.Slot(3)))
		f.teardown()
	})
}

func TestRecycleAfterCloseIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := memdrv.NewStore()
		d := memdrv.New(s, memdrv.Options{Logger: quiet})
		require.True(t, d.Drain(t.Context()))
		require.NoError(t, d.Close())
		assert.ErrorIs(t, d.Recycle(t.Context()), contract.ErrDriverRejected)
	})
}

func TestARecycleThatKeepsStraysStillReportsEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		op := f.unprovable(nil)
		f.d.KeepStraysOnRecycle()
		require.NoError(t, f.d.Recycle(t.Context()))
		assert.Equal(t, contract.Ended, op.Poll(nil).Access, "the deviation: Ended")
		assert.Equal(t, 1, f.d.FinishStrays(), "with its transfer still running")
		assert.Equal(t, pattern(slotBytes, 1), f.mem.Slot(4), "which writes memory whose access ended")
		f.teardown()
	})
}

// unprovableRows has the fixture get n stored keys ("u0", "u1", …) into
// slots 4 on, each transfer left running: one operation, Unprovable,
// with n strays.
func (f *fixture) unprovableRows(n int, onChange func()) contract.Operation {
	f.t.Helper()
	var rows []contract.Row
	for i := range n {
		key := fmt.Sprintf("u%d", i)
		f.store.Set(key, pattern(slotBytes, byte(i+1)))
		f.d.UnprovableGets(key)
		rows = append(rows, f.row(4+i, key))
	}
	op, err := f.d.Get(batch(rows...), nil, onChange)
	require.NoError(f.t, err)
	synctest.Wait()
	require.Equal(f.t, contract.Unprovable, op.Poll(nil).Access)
	return op
}

func TestARecycleThatStopsOneStrayLeavesTheOthersRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		op := f.unprovableRows(3, nil)
		f.d.StopOneStrayOnRecycle()
		require.NoError(t, f.d.Recycle(t.Context()))
		assert.Equal(t, contract.Ended, op.Poll(nil).Access, "the deviation: Ended")
		assert.Equal(t, 2, f.d.FinishStrays(), "two of the three transfers still ran")
		written := 0
		for slot := 4; slot < 7; slot++ {
			if !untouched(f.mem.Slot(slot)) {
				written++
				assert.Equal(t, pattern(slotBytes, byte(slot-3)), f.mem.Slot(slot), "slot %d: its own object", slot)
			}
		}
		assert.Equal(t, 2, written, "into memory whose access ended")

		again := f.unprovableRows(2, nil)
		require.NoError(t, f.d.Recycle(t.Context()))
		assert.Equal(t, contract.Ended, again.Poll(nil).Access)
		assert.Zero(t, f.d.FinishStrays(), "the next Recycle tears every transfer down")
		f.teardown()
	})
}

func TestARecycleThatCallsBackFirstAnnouncesAnEndNotYetVisible(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		var recycling atomic.Bool
		var seen []contract.Access
		var op contract.Operation
		watched := func() {
			if recycling.Load() {
				seen = append(seen, op.Poll(nil).Access)
			}
		}
		recycle := func(bend bool) {
			if bend {
				f.d.CallBackBeforeEndOnRecycle()
			}
			seen = nil
			recycling.Store(true)
			require.NoError(t, f.d.Recycle(t.Context()))
			recycling.Store(false)
		}
		op = f.unprovableRows(1, watched)
		recycle(true)
		assert.Equal(t, []contract.Access{contract.Unprovable}, seen, "called once, before the end was visible, and not after")
		assert.Equal(t, contract.Ended, op.Poll(nil).Access)

		op = f.unprovableRows(1, watched)
		recycle(false)
		assert.Equal(t, []contract.Access{contract.Ended}, seen, "the next Recycle calls back once the end is visible")
		f.teardown()
	})
}
