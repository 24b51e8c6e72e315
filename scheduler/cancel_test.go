package scheduler_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/scheduler"
)

func TestCancelRemovesOnlyQueuedPartsItMatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1)
		running := f.gated("G0")
		running.owner = 1
		f.submit(scheduler.Get, running)
		synctest.Wait()

		f.submit(scheduler.Put, part{name: "P1", owner: 1})
		f.submit(scheduler.Get, part{name: "G1", owner: 1}, part{name: "G2", owner: 2})
		f.submit(scheduler.Put, part{name: "P2", owner: 2})
		f.submit(scheduler.Get, part{name: "G3", owner: 1})

		gone := f.pool.Cancel(func(p part) bool { return p.owner == 1 })
		assert.Equal(t, []string{"P1", "G1", "G3"}, names(gone), "queued owner-1 parts, in submission order")
		assert.Equal(t, 2, f.pool.Queued())
		assert.Equal(t, 1, f.pool.Running(), "the running part is not cancelled")

		f.open(running)
		synctest.Wait()
		assert.Equal(t, []string{"G0", "G2", "P2"}, f.rec.order(), "cancelled parts never run")
	})
}

func TestCancelMatchingNothingReturnsNil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1)
		hold := f.gated("G0")
		f.submit(scheduler.Get, hold)
		synctest.Wait()
		f.submit(scheduler.Put, quick("P1"))
		f.submit(scheduler.Get, quick("G1"))

		assert.Nil(t, f.pool.Cancel(func(part) bool { return false }))
		assert.Equal(t, 2, f.pool.Queued())
		f.open(hold)
		synctest.Wait()
		assert.Equal(t, []string{"G0", "G1", "P1"}, f.rec.order())
	})
}

func TestCancelPredicateMayCallThePool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1)
		hold := f.gated("G0")
		f.submit(scheduler.Get, hold)
		synctest.Wait()
		f.submit(scheduler.Get, quick("G1"), quick("G2"))

		var seen []int
		gone := f.pool.Cancel(func(p part) bool {
			seen = append(seen, f.pool.Queued())
			if p.name == "G1" {
				// A part submitted while Cancel runs is not considered.
				require.NoError(t, f.pool.Submit(scheduler.Get, quick("G3")))
			}
			return true
		})
		assert.Equal(t, []string{"G1", "G2"}, names(gone))
		assert.Equal(t, []int{2, 3}, seen, "Queued answered from inside the predicate")
		assert.Equal(t, 1, f.pool.Queued(), "G3 stays queued")
		f.open(hold)
		synctest.Wait()
		assert.Equal(t, []string{"G0", "G3"}, f.rec.order())
	})
}

func TestCancelDoesNotReturnAPartAWorkerTookMeanwhile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1)
		hold := f.gated("G0")
		f.submit(scheduler.Get, hold)
		synctest.Wait()
		g1 := f.gated("G1")
		f.submit(scheduler.Get, g1)

		gone := f.pool.Cancel(func(p part) bool {
			if p.name == "G1" {
				// The worker comes free and takes G1 while the predicate
				// is deciding about it.
				f.open(hold)
				synctest.Wait()
				require.Equal(t, 1, f.pool.Running())
				require.Equal(t, 0, f.pool.Queued())
			}
			return true
		})
		assert.Empty(t, gone, "G1 runs, so Cancel does not return it")
		assert.Equal(t, []string{"G0", "G1"}, f.rec.order())
	})
}
