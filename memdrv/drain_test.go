package memdrv_test

import (
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

func TestDrainCancelsQueuedRows(t *testing.T) {
	for _, noCancel := range []bool{false, true} {
		t.Run(map[bool]string{false: "cancel", true: "no cancel"}[noCancel], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, memdrv.Options{NoCancel: noCancel})
				resume := f.d.Pause()
				defer resume()
				called := new(counter)
				op, err := f.d.Get(batch(f.row(0, "a"), f.row(1, "b")), nil, called.inc)
				require.NoError(t, err)

				require.True(t, f.d.Drain(context.Background()))
				assert.Equal(t, contract.OpState{Rows: statuses(contract.Cancelled, contract.Cancelled), Access: contract.Ended}, op.Poll(nil))
				assert.Equal(t, int64(1), called.get(), "Drain returned after the callback")

				_, err = f.d.Put(batch(f.row(2, "c")), nil)
				assert.ErrorIs(t, err, contract.ErrDriverRejected, "no work after Drain")
				_, err = f.d.Get(batch(f.row(2, "c")), nil, nil)
				assert.ErrorIs(t, err, contract.ErrDriverRejected, "no work after Drain")
				require.NoError(t, f.d.Unregister(f.reg))
				require.NoError(t, f.d.Close())
			})
		})
	}
}

func TestDrainWaitsForAHeldRow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		f.store.Set("k", pattern(slotBytes, 1))
		gate := f.d.Hold(memdrv.GetDir)
		op := f.get(f.row(0, "k"))
		require.NoError(t, gate.Held(t.Context()))

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		assert.False(t, f.d.Drain(ctx), "a held row keeps access open")
		assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded, "Drain returned only once its context ended")
		assert.Equal(t, 1, f.d.Live())
		err := f.d.Close()
		assert.ErrorIs(t, err, contract.ErrDriverRejected, "no Close after a false drain")

		gate.Release()
		assert.True(t, f.d.Drain(context.Background()))
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Ready), Access: contract.Ended}, op.Poll(nil))
		require.NoError(t, f.d.Unregister(f.reg))
		require.NoError(t, f.d.Close())
	})
}

func TestDrainWaitsForTheLastCallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		unblock := make(chan struct{})
		entered := make(chan struct{}, 1)
		called := new(counter)
		onChange := func() {
			entered <- struct{}{}
			<-unblock
			called.inc()
		}
		op, err := f.d.Put(batch(f.row(0, "a")), onChange)
		require.NoError(t, err)
		<-entered
		// The row is final, access ended, but the worker is still inside
		// the callback: Drain must not say true yet.
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Ready), Access: contract.Ended}, op.Poll(nil))
		assert.Zero(t, f.d.Live())
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		assert.False(t, f.d.Drain(ctx))

		close(unblock)
		assert.True(t, f.d.Drain(context.Background()))
		assert.Equal(t, int64(1), called.get(), "the callback returned before Drain did")
		synctest.Wait()
		assert.Equal(t, int64(1), called.get(), "no callback after a Drain that returned true")
		require.NoError(t, f.d.Unregister(f.reg))
		require.NoError(t, f.d.Close())
	})
}

func TestDrainWithAnUnprovableGet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		f.keep()
		f.store.Set("k", pattern(slotBytes, 1))
		f.d.UnprovableGets("k")
		op := f.get(f.row(4, "k"))
		synctest.Wait()
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Fault), Access: contract.Unprovable}, op.Poll(nil))
		assert.Equal(t, 1, f.d.Unprovable())
		assert.Zero(t, f.d.Live())

		// What is left can never change: Drain answers false at once,
		// without a deadline (in the bubble, waiting would deadlock).
		assert.False(t, f.d.Drain(context.Background()))
		err := f.d.Unregister(f.reg)
		require.ErrorIs(t, err, contract.ErrDriverRejected, "an unprovable operation keeps its region busy")
		assert.ErrorIs(t, err, memdrv.ErrRegionBusy)
		assert.Contains(t, err.Error(), `key "k"`)
		assert.Len(t, f.d.Regions(), 1, "the region stays registered for good")
		assert.ErrorIs(t, f.d.Close(), contract.ErrDriverRejected)
		assert.Equal(t, contract.Unprovable, op.Poll(nil).Access, "terminal")
		err = f.mem.Free()
		require.ErrorIs(t, err, memdrv.ErrMemoryLent, "the pinned memory is kept")
		assert.Equal(t, byte(fillByte), f.mem.Slot(4)[0], "and still mapped")
	})
}

func TestCloseRules(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		err := f.d.Close()
		require.ErrorIs(t, err, contract.ErrDriverRejected)
		assert.Contains(t, err.Error(), "no Drain has returned true")
		assert.Contains(t, err.Error(), "Backend.Close", "a driver closed before its backend says what to do first")

		require.True(t, f.d.Drain(context.Background()))
		err = f.d.Close()
		require.ErrorIs(t, err, contract.ErrDriverRejected)
		assert.Contains(t, err.Error(), "1 registrations not revoked")
		assert.Contains(t, err.Error(), "Backend.Close")

		require.NoError(t, f.d.Unregister(f.reg))
		require.True(t, f.d.Drain(context.Background()), "Drain answers anew")
		require.NoError(t, f.d.Close())
		assert.NoError(t, f.d.Close(), "closing twice is nil")
	})
}

func TestUnregisterWhileBusy(t *testing.T) {
	for _, dir := range []memdrv.Direction{memdrv.PutDir, memdrv.GetDir} {
		t.Run(dir.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, memdrv.Options{})
				other, otherReg := register(t, f.d, slotBytes, 2)
				gate := f.d.Hold(dir)
				var op contract.Operation
				if dir == memdrv.PutDir {
					op = f.put(f.row(5, "k"))
				} else {
					op = f.get(f.row(5, "k"))
				}
				require.NoError(t, gate.Held(t.Context()))

				err := f.d.Unregister(f.reg)
				require.ErrorIs(t, err, contract.ErrDriverRejected)
				assert.ErrorIs(t, err, memdrv.ErrRegionBusy)
				assert.Contains(t, err.Error(), "row 0")
				assert.ElementsMatch(t, []contract.SlotRegion{f.mem.Region, other.Region}, f.d.Regions(), "stays registered")
				assert.NoError(t, f.d.Unregister(otherReg), "a region no operation touches is free")

				gate.Release()
				synctest.Wait()
				assert.Equal(t, contract.Ended, op.Poll(nil).Access)
				assert.NoError(t, f.d.Unregister(f.reg))
				require.True(t, f.d.Drain(context.Background()))
				require.NoError(t, f.d.Close())
			})
		})
	}
}

// A row makes busy only the regions its spans overlap: regions that
// merely touch its span, before or after, stay free to unregister.
func TestUnregisterARegionAdjacentToABusyOne(t *testing.T) {
	for _, dir := range []memdrv.Direction{memdrv.PutDir, memdrv.GetDir} {
		for _, rowInLow := range []bool{true, false} {
			t.Run(fmt.Sprintf("%v/row in the lower region=%v", dir, rowInLow), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					f := newFixture(t, memdrv.Options{})
					mem := alloc(t, slotBytes, 4, contract.Host)
					low, high := mem.Region, mem.Region
					low.SlotCount, low.Len = 2, 2*slotBytes
					high.Base, high.SlotCount, high.Len = mem.Region.Base+2*slotBytes, 2, 2*slotBytes
					lowReg, err := f.d.Register(low)
					require.NoError(t, err)
					highReg, err := f.d.Register(high)
					require.NoError(t, err)
					busy, busyReg, freeReg, span := low, lowReg, highReg, low.Slot(1) // ends where high begins
					if !rowInLow {
						busy, busyReg, freeReg, span = high, highReg, lowReg, high.Slot(0) // begins where low ends
					}
					gate := f.d.Hold(dir)
					b := batch(contract.Row{Name: []byte("k"), Spans: []contract.Span{span}})
					var op contract.Operation
					if dir == memdrv.PutDir {
						op, err = f.d.Put(b, nil)
					} else {
						op, err = f.d.Get(b, nil, nil)
					}
					require.NoError(t, err)
					require.NoError(t, gate.Held(t.Context()))

					assert.NoError(t, f.d.Unregister(freeReg), "the adjacent region is free")
					assert.ErrorIs(t, f.d.Unregister(busyReg), memdrv.ErrRegionBusy)
					assert.Contains(t, f.d.Regions(), busy)

					gate.Release()
					synctest.Wait()
					assert.Equal(t, contract.Ended, op.Poll(nil).Access)
					assert.NoError(t, f.d.Unregister(busyReg))
					f.teardown()
				})
			})
		}
	}
}
