package memdrv_test

import (
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

func TestCancelEndsUnstartedRows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		resume := f.d.Pause()
		called := new(counter)
		op, err := f.d.Put(batch(f.row(0, "a"), f.row(1, "b"), f.row(2, "c")), called.inc)
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Pending, contract.Pending, contract.Pending), Access: contract.Open}, op.Poll(nil))
		assert.Zero(t, called.get(), "nothing changed yet")

		op.Cancel()
		// All three rows end at once, and so does access.
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Cancelled, contract.Cancelled, contract.Cancelled), Access: contract.Ended}, op.Poll(nil))
		synctest.Wait()
		assert.Equal(t, int64(1), called.get(), "the callback came, on a driver goroutine")

		op.Cancel() // a second cancel changes nothing and calls nothing
		resume()
		synctest.Wait()
		assert.Equal(t, int64(1), called.get())
		assert.Zero(t, f.store.Len(), "no cancelled row ran")
		assert.Zero(t, f.d.Live())
		f.teardown()
	})
}

func TestCancelEndsOnlyUntakenRows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{Workers: 1})
		f.store.Set("a", pattern(slotBytes, 1))
		gate := f.d.Hold(memdrv.GetDir)
		op := f.get(f.row(0, "a"), f.row(1, "b"))
		require.NoError(t, gate.Held(t.Context()))
		op.Cancel()
		synctest.Wait()
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Pending, contract.Cancelled), Access: contract.Open}, op.Poll(nil),
			"the taken row runs on")
		gate.Release()
		synctest.Wait()
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Ready, contract.Cancelled), Access: contract.Ended}, op.Poll(nil),
			"a completion after the cancel keeps its real verdict")
		assert.True(t, untouched(f.mem.Slot(1)))
		f.teardown()
	})
}

func TestCompleteAfterCancel(t *testing.T) {
	tests := []struct {
		name     string
		complete bool
		want     contract.RowStatus
	}{
		{"on: completes with its verdict", true, contract.Ready},
		{"off: ends cancelled", false, contract.Cancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, memdrv.Options{})
				f.d.CompleteAfterCancel(tt.complete)
				f.store.Set("k", pattern(slotBytes, 1))
				gate := f.d.Hold(memdrv.GetDir)
				op := f.get(f.row(0, "k"))
				require.NoError(t, gate.Held(t.Context()))
				op.Cancel()
				synctest.Wait()
				if !tt.complete {
					// The row left the gate without the gate's release.
					assert.Equal(t, contract.OpState{Rows: statuses(contract.Cancelled), Access: contract.Ended}, op.Poll(nil))
					assert.True(t, untouched(f.mem.Slot(0)))
				}
				gate.Release()
				synctest.Wait()
				assert.Equal(t, contract.OpState{Rows: statuses(tt.want), Access: contract.Ended}, op.Poll(nil))
				assert.Equal(t, tt.want == contract.Ready, !untouched(f.mem.Slot(0)))
				f.teardown()
			})
		})
	}
}

func TestNoCancelIgnoresCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{NoCancel: true})
		require.False(t, f.d.Capabilities().Cancel)
		resume := f.d.Pause()
		f.write(0, 1)
		op := f.put(f.row(0, "a"))
		op.Cancel()
		synctest.Wait()
		assert.Equal(t, statuses(contract.Pending), op.Poll(nil).Rows)
		resume()
		synctest.Wait()
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Ready), Access: contract.Ended}, op.Poll(nil))
		f.teardown()
	})
}

func TestPauseNestsAndResumeIsIdempotent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		r1, r2 := f.d.Pause(), f.d.Pause()
		op := f.put(f.row(0, "a"))
		r1()
		r1() // idempotent: does not undo the second pause
		synctest.Wait()
		assert.Equal(t, statuses(contract.Pending), op.Poll(nil).Rows)
		r2()
		synctest.Wait()
		assert.Equal(t, statuses(contract.Ready), op.Poll(nil).Rows)
		f.teardown()
	})
}

// A pause also stops a worker that is busy when it comes: once its row
// is done, it takes no new one until resume.
func TestPauseStopsABusyWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{Workers: 1})
		gate := f.d.Hold(memdrv.PutDir)
		first := f.put(f.row(0, "a"))
		require.NoError(t, gate.Held(t.Context()))
		resume := f.d.Pause()
		second := f.put(f.row(1, "b"))
		gate.Release()
		synctest.Wait()
		assert.Equal(t, statuses(contract.Ready), first.Poll(nil).Rows)
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Pending), Access: contract.Open}, second.Poll(nil),
			"the worker took no row while paused")
		resume()
		synctest.Wait()
		assert.Equal(t, statuses(contract.Ready), second.Poll(nil).Rows)
		f.teardown()
	})
}

// Workers bounds the rows in flight: with every row held at the store
// call, exactly Workers rows are taken, and a Cancel ends the rest.
func TestWorkersBoundTheRowsInFlight(t *testing.T) {
	for _, workers := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, memdrv.Options{Workers: workers})
				gate := f.d.Hold(memdrv.GetDir)
				var rows []contract.Row
				for i := range slotCount {
					rows = append(rows, f.row(i, fmt.Sprintf("k%d", i)))
				}
				first := f.get(rows[:3]...)
				second := f.get(rows[3:]...)
				require.NoError(t, gate.Held(t.Context()))
				synctest.Wait() // every worker has taken its row and blocks
				first.Cancel()
				second.Cancel()
				synctest.Wait()
				taken := 0
				for _, op := range []contract.Operation{first, second} {
					for _, s := range op.Poll(nil).Rows {
						if s == contract.Pending {
							taken++
						}
					}
				}
				assert.Equal(t, workers, taken, "rows taken, held at the gate")
				gate.Release()
				synctest.Wait()
				f.teardown()
			})
		})
	}
}
