package scheduler_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/scheduler"
)

// groups is a grouped pool's run function that records each group it is
// handed, as its parts' names joined by "+", and waits on the gate of
// the group's head.
type groups struct {
	mu      sync.Mutex
	started []string
	running []int // Running() seen inside each run call
	pool    *scheduler.Pool[part]
}

func (g *groups) run(group []part) {
	g.mu.Lock()
	g.started = append(g.started, strings.Join(names(group), "+"))
	g.running = append(g.running, g.pool.Running())
	g.mu.Unlock()
	if group[0].gate != nil {
		<-group[0].gate
	}
}

func (g *groups) order() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.started...)
}

// upTo is a join that takes at most n parts a group, and never a part
// whose owner is -1.
func upTo(n int) func([]part, part) bool {
	return func(group []part, next part) bool { return len(group) < n && next.owner != -1 }
}

// newGrouped starts a grouped pool of workers that records its groups;
// it stops the pool at the end of the test.
func newGrouped(t *testing.T, workers int, join func([]part, part) bool) *groups {
	t.Helper()
	return newGrouping(t, workers, scheduler.Grouping[part]{Join: join})
}

// newGrouping is newGrouped with every setting of the grouping.
func newGrouping(t *testing.T, workers int, grouping scheduler.Grouping[part]) *groups {
	t.Helper()
	g := &groups{}
	pool, err := scheduler.NewGrouped(workers, grouping, g.run)
	require.NoError(t, err)
	g.pool = pool
	t.Cleanup(func() {
		if !pool.Stop(context.Background()) {
			t.Error("Stop at cleanup reported false")
		}
	})
	return g
}

func TestNewGroupedRefusesBadArguments(t *testing.T) {
	run := func([]int) {}
	join := func([]int, int) bool { return true }
	for _, tc := range []struct {
		name     string
		workers  int
		grouping scheduler.Grouping[int]
		run      func([]int)
		want     string
	}{
		{"zero workers", 0, scheduler.Grouping[int]{Join: join}, run, "workers is 0"},
		{"nil run", 1, scheduler.Grouping[int]{Join: join}, nil, "run is nil"},
		{"nil join", 1, scheduler.Grouping[int]{}, run, "join is nil"},
		{"a negative limit", 1, scheduler.Grouping[int]{Join: join, Limit: -1}, run, "limit is -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool, err := scheduler.NewGrouped(tc.workers, tc.grouping, tc.run)
			require.ErrorIs(t, err, scheduler.ErrInvalid)
			assert.Contains(t, err.Error(), tc.want)
			assert.Nil(t, pool)
		})
	}
}

func TestGroupsJoinQueuedPartsOfOneKindInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGrouped(t, 1, upTo(3))
		hold := part{name: "H", gate: make(chan struct{})}
		require.NoError(t, g.pool.Submit(scheduler.Get, hold))
		synctest.Wait()
		for _, p := range gets(1, 5) {
			require.NoError(t, g.pool.Submit(scheduler.Get, p))
		}
		require.NoError(t, g.pool.Submit(scheduler.Put, quick("P1")))
		require.NoError(t, g.pool.Submit(scheduler.Put, quick("P2")))
		close(hold.gate)
		synctest.Wait()
		assert.Equal(t, []string{"H", "G1+G2+G3", "G4+G5", "P1+P2"}, g.order(),
			"a group holds parts of one kind, oldest first, as many as join accepts")
		assert.Equal(t, []int{1, 3, 2, 2}, g.running, "Running counts every part of the group while it runs")
		assert.Zero(t, g.pool.Running())
	})
}

func TestAGroupEndsAtJoinsFirstRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGrouped(t, 1, upTo(10))
		hold := part{name: "H", gate: make(chan struct{})}
		require.NoError(t, g.pool.Submit(scheduler.Get, hold))
		synctest.Wait()
		for _, p := range []part{quick("G1"), {name: "G2", owner: -1}, quick("G3"), quick("G4")} {
			require.NoError(t, g.pool.Submit(scheduler.Get, p))
		}
		close(hold.gate)
		synctest.Wait()
		assert.Equal(t, []string{"H", "G1", "G2+G3+G4"}, g.order(),
			"a part join refuses is not skipped: it heads the next group")
	})
}

func TestAGroupCountsOnceInTheOrderRule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGrouped(t, 1, upTo(2))
		hold := part{name: "H", gate: make(chan struct{})}
		require.NoError(t, g.pool.Submit(scheduler.Get, hold))
		synctest.Wait()
		require.NoError(t, g.pool.Submit(scheduler.Put, quick("P1")))
		for _, p := range gets(1, 10) {
			require.NoError(t, g.pool.Submit(scheduler.Get, p))
		}
		close(hold.gate)
		synctest.Wait()
		assert.Equal(t, []string{"H", "G1+G2", "G3+G4", "G5+G6", "G7+G8", "P1", "G9+G10"}, g.order(),
			"the put waits for four groups of gets, not four gets")
	})
}

func TestCancelLeavesAGroupsPartsAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGrouped(t, 1, upTo(3))
		hold := part{name: "H", gate: make(chan struct{})}
		require.NoError(t, g.pool.Submit(scheduler.Get, hold))
		synctest.Wait()
		grouped := part{name: "G0", gate: make(chan struct{})}
		require.NoError(t, g.pool.Submit(scheduler.Get, grouped))
		require.NoError(t, g.pool.Submit(scheduler.Get, quick("G1")))
		close(hold.gate)
		synctest.Wait()
		require.Equal(t, []string{"H", "G0+G1"}, g.order())
		assert.Nil(t, g.pool.Cancel(func(part) bool { return true }), "parts taken into a group are running, not queued")
		assert.Equal(t, 2, g.pool.Running())
		close(grouped.gate)
		synctest.Wait()
		assert.Zero(t, g.pool.Running())
	})
}

func TestFreeWorkersRunPartsAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGrouped(t, 4, upTo(4))
		for _, p := range gets(1, 3) {
			require.NoError(t, g.pool.Submit(scheduler.Get, p))
			synctest.Wait() // a worker takes each part before the next comes
		}
		assert.Equal(t, []string{"G1", "G2", "G3"}, g.order(), "no part waits to be grouped while a worker is free")
	})
}

func TestALimitHoldsGroupsBackUntilOneReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGrouping(t, 4, scheduler.Grouping[part]{Join: upTo(4), Limit: 1})
		first := part{name: "G1", gate: make(chan struct{})}
		require.NoError(t, g.pool.Submit(scheduler.Get, first))
		synctest.Wait()
		require.NoError(t, g.pool.Submit(scheduler.Get, quick("G2")))
		require.NoError(t, g.pool.Submit(scheduler.Get, quick("G3")))
		synctest.Wait()
		assert.Equal(t, []string{"G1"}, g.order(), "G2 and G3 wait though three workers are free")
		assert.Equal(t, 2, g.pool.Queued())
		require.NoError(t, g.pool.Submit(scheduler.Put, quick("P1")))
		synctest.Wait()
		assert.Equal(t, []string{"G1", "P1"}, g.order(), "each kind has its own limit")
		close(first.gate)
		synctest.Wait()
		assert.Equal(t, []string{"G1", "P1", "G2+G3"}, g.order(), "once G1 returned, the gets that waited go as one group")
	})
}

func TestALimitOfTwoRunsTwoGroupsOfAKind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGrouping(t, 4, scheduler.Grouping[part]{Join: upTo(1), Limit: 2})
		a := part{name: "G1", gate: make(chan struct{})}
		b := part{name: "G2", gate: make(chan struct{})}
		require.NoError(t, g.pool.Submit(scheduler.Get, a))
		require.NoError(t, g.pool.Submit(scheduler.Get, b))
		synctest.Wait()
		require.NoError(t, g.pool.Submit(scheduler.Get, quick("G3")))
		synctest.Wait()
		assert.ElementsMatch(t, []string{"G1", "G2"}, g.order())
		close(b.gate)
		synctest.Wait()
		assert.Equal(t, "G3", g.order()[2], "G3 starts when one of the two returns")
		close(a.gate)
	})
}

func TestAHeldBackGetLetsAPutGoFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGrouping(t, 3, scheduler.Grouping[part]{Join: upTo(1), Limit: 1})
		first := part{name: "G1", gate: make(chan struct{})}
		require.NoError(t, g.pool.Submit(scheduler.Get, first))
		synctest.Wait()
		require.NoError(t, g.pool.Submit(scheduler.Get, quick("G2")))
		require.NoError(t, g.pool.Submit(scheduler.Put, quick("P1")))
		synctest.Wait()
		assert.Equal(t, []string{"G1", "P1"}, g.order(), "a get the limit holds back does not hold a put back")
		close(first.gate)
		synctest.Wait()
		assert.Equal(t, []string{"G1", "P1", "G2"}, g.order())
	})
}
