package memdrv_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// HoldKeys holds the rows of its keys and nothing else: the other rows
// of the same operation run on, and the gate says which rows it holds.
func TestHoldKeysHoldsOnlyItsKeys(t *testing.T) {
	for _, dir := range []memdrv.Direction{memdrv.PutDir, memdrv.GetDir} {
		t.Run(dir.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, memdrv.Options{})
				rows := []contract.Row{f.row(0, "held"), f.row(1, "free")}
				want := [][]byte{pattern(slotBytes, 1), pattern(slotBytes, 2)}
				gate := f.d.HoldKeys(dir, "held")
				var op contract.Operation
				if dir == memdrv.PutDir {
					copy(f.mem.Slot(0), want[0])
					copy(f.mem.Slot(1), want[1])
					op = f.put(rows...)
				} else {
					f.store.Set("held", want[0])
					f.store.Set("free", want[1])
					op = f.get(rows...)
				}
				require.NoError(t, gate.Held(t.Context()))
				synctest.Wait()
				assert.Equal(t, contract.OpState{Rows: statuses(contract.Pending, contract.Ready), Access: contract.Open}, op.Poll(nil),
					"the row of the held key waits; the other ran")
				assert.True(t, gate.Holding("held"))
				assert.False(t, gate.Holding("free"), "a row that ended is held by nothing")
				assert.False(t, gate.Holding("other"))

				gate.Release()
				synctest.Wait()
				assert.Equal(t, contract.OpState{Rows: statuses(contract.Ready, contract.Ready), Access: contract.Ended}, op.Poll(nil))
				assert.False(t, gate.Holding("held"), "released")
				if dir == memdrv.GetDir {
					assert.Equal(t, want[0], f.mem.Slot(0))
					assert.Equal(t, want[1], f.mem.Slot(1))
				} else {
					for i, k := range []string{"held", "free"} {
						obj, ok := f.store.Object(k)
						require.True(t, ok, k)
						assert.Equal(t, want[i], obj, k)
					}
				}
				f.teardown()
			})
		})
	}
}

// With its only worker blocked at the gate, a row waiting for a worker
// cannot end until the gate is released: the gate holds it too. With a
// worker free, it does not.
func TestHoldKeysHoldsTheQueueBehindItsOnlyWorker(t *testing.T) {
	for _, c := range []struct {
		workers int
		holding bool
	}{{1, true}, {2, false}} {
		t.Run(fmt.Sprintf("%d workers", c.workers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, memdrv.Options{Workers: c.workers})
				f.store.Set("held", pattern(slotBytes, 1))
				f.store.Set("behind", pattern(slotBytes, 2))
				gate := f.d.HoldKeys(memdrv.GetDir, "held")
				op := f.get(f.row(0, "held"), f.row(1, "behind"))
				require.NoError(t, gate.Held(t.Context()))
				assert.Equal(t, c.holding, gate.Holding("behind"), "%d workers", c.workers)
				synctest.Wait()
				want := contract.Ready
				if c.holding {
					want = contract.Pending
				}
				assert.Equal(t, statuses(contract.Pending, want), op.Poll(nil).Rows, "%d workers", c.workers)
				gate.Release()
				synctest.Wait()
				assert.Equal(t, contract.OpState{Rows: statuses(contract.Ready, contract.Ready), Access: contract.Ended}, op.Poll(nil))
				f.teardown()
			})
		})
	}
}

// A row of a key HoldKeys names blocks at that gate, not at Hold's, and
// of two HoldKeys gates naming its key at the older one.
func TestHoldKeysComesBeforeHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{Workers: 3})
		for _, k := range []string{"a", "b", "c"} {
			f.store.Set(k, pattern(slotBytes, 1))
		}
		all := f.d.Hold(memdrv.GetDir)
		older := f.d.HoldKeys(memdrv.GetDir, "a", "b")
		newer := f.d.HoldKeys(memdrv.GetDir, "b")
		op := f.get(f.row(0, "a"), f.row(1, "b"), f.row(2, "c"))
		for _, g := range []*memdrv.Gate{all, older} {
			require.NoError(t, g.Held(t.Context()))
		}
		synctest.Wait()
		assert.True(t, older.Holding("a"))
		assert.True(t, older.Holding("b"))
		assert.False(t, newer.Holding("b"), "the older gate holds it")
		assert.True(t, all.Holding("c"))
		assert.False(t, all.Holding("a"))

		older.Release()
		synctest.Wait()
		assert.Equal(t, statuses(contract.Ready, contract.Ready, contract.Pending), op.Poll(nil).Rows,
			"the rows of the keys ran; Hold's gate still holds the other")
		all.Release()
		newer.Release()
		synctest.Wait()
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Ready, contract.Ready, contract.Ready), Access: contract.Ended}, op.Poll(nil))
		f.teardown()
	})
}

// Rows taken after a HoldKeys gate was released pass it.
func TestHoldKeysReleasedHoldsNothingLater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		f.store.Set("k", pattern(slotBytes, 1))
		gate := f.d.HoldKeys(memdrv.GetDir, "k")
		gate.Release()
		gate.Release()
		op := f.get(f.row(0, "k"))
		synctest.Wait()
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Ready), Access: contract.Ended}, op.Poll(nil))
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		assert.ErrorIs(t, gate.Held(ctx), context.Canceled, "no row ever reached it")
		assert.Panics(t, func() { f.d.HoldKeys(0, "k") })
		f.teardown()
	})
}
