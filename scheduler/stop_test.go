package scheduler_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/scheduler"
)

func TestStopWaitsForRunningParts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 2)
		g1, p1 := f.gated("G1"), f.gated("P1")
		f.submit(scheduler.Get, g1)
		f.submit(scheduler.Put, p1)
		synctest.Wait()
		require.Equal(t, 2, f.pool.Running())

		stopped := make(chan bool, 1)
		go func() { stopped <- f.pool.Stop(context.Background()) }()
		synctest.Wait()
		assert.Empty(t, stopped, "Stop returned while two parts run")

		f.open(g1)
		synctest.Wait()
		assert.Empty(t, stopped, "Stop returned while one part runs")

		f.open(p1)
		synctest.Wait()
		require.Len(t, stopped, 1, "Stop returned once every part did")
		assert.True(t, <-stopped)
		assert.Zero(t, f.pool.Running())
	})
}

func TestStopReportsFalseWhenItsContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1)
		g1 := f.gated("G1")
		f.submit(scheduler.Get, g1)
		synctest.Wait()

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		assert.False(t, f.pool.Stop(ctx), "a part still runs")
		assert.Equal(t, time.Second, time.Since(start), "Stop waited until its context ended")
		assert.Equal(t, 1, f.pool.Running())

		// A context already ended answers at once.
		assert.False(t, f.pool.Stop(ctx))

		// Stop may be called again and waits again.
		f.open(g1)
		assert.True(t, f.pool.Stop(context.Background()))
		assert.True(t, f.pool.Stop(ctx), "a stopped pool reports true even with an ended context")
	})
}

func TestStopOfAnIdlePoolReturnsTrueAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 4)
		synctest.Wait()
		assert.True(t, f.pool.Stop(context.Background()))
	})
}

func TestStopLeavesNoGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := workerGoroutines()
		f := newFixture(t, 4)
		g1, p1 := f.gated("G1"), f.gated("P1")
		f.submit(scheduler.Get, g1)
		f.submit(scheduler.Put, p1)
		synctest.Wait()
		require.Equal(t, before+4, workerGoroutines(), "the check sees the pool's workers")

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		require.False(t, f.pool.Stop(ctx))
		synctest.Wait()
		assert.Equal(t, before+2, workerGoroutines(), "idle workers returned; busy ones remain")

		f.open(g1, p1)
		require.True(t, f.pool.Stop(context.Background()))
		synctest.Wait()
		assert.Equal(t, before, workerGoroutines(), "no worker goroutine remains")
	})
}

func TestStopLeavesQueuedPartsForCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1)
		hold := f.gated("G0")
		f.submit(scheduler.Get, hold)
		synctest.Wait()
		f.submit(scheduler.Put, quick("P1"))
		f.submit(scheduler.Get, quick("G1"))

		stopped := make(chan bool, 1)
		go func() { stopped <- f.pool.Stop(context.Background()) }()
		synctest.Wait()
		f.open(hold)
		require.True(t, <-stopped)

		assert.Equal(t, []string{"G0"}, f.rec.order(), "no queued part ran after Stop")
		assert.Equal(t, 2, f.pool.Queued())
		gone := f.pool.Cancel(func(part) bool { return true })
		assert.Equal(t, []string{"P1", "G1"}, names(gone))
		assert.Zero(t, f.pool.Queued())
	})
}

func TestSubmitAfterStopFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 2)
		require.True(t, f.pool.Stop(context.Background()))
		for _, kind := range []scheduler.Kind{scheduler.Get, scheduler.Put} {
			err := f.pool.Submit(kind, quick("late"))
			require.ErrorIs(t, err, scheduler.ErrStopped)
			assert.Contains(t, err.Error(), kind.String())
		}
		assert.Zero(t, f.pool.Queued())
		assert.Empty(t, f.rec.order())
	})
}

func TestSubmitFailsOnceStopHasBeenCalled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1)
		g1 := f.gated("G1")
		f.submit(scheduler.Get, g1)
		synctest.Wait()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		require.False(t, f.pool.Stop(ctx))
		require.ErrorIs(t, f.pool.Submit(scheduler.Put, quick("late")), scheduler.ErrStopped,
			"a Stop that reported false still stops the pool taking parts")
		f.open(g1)
	})
}

func TestStopCalledFromRunReportsFalse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		answer := make(chan bool, 1)
		var pool *scheduler.Pool[int]
		pool, err := scheduler.New(2, func(int) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			answer <- pool.Stop(ctx)
		})
		require.NoError(t, err)
		require.NoError(t, pool.Submit(scheduler.Get, 1))
		assert.False(t, <-answer, "Stop inside run cannot see its own part return")
		assert.True(t, pool.Stop(context.Background()))
	})
}
