package scheduler_test

import (
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/scheduler"
)

// Most tests here hold each worker with a gated get, queue parts behind
// it, then open one gate and read the order in which the queued parts
// started. With one worker free at a time the order is exact.

// holdWorkers submits one gated get per worker and waits until all run.
func (f *fixture) holdWorkers(workers int) []part {
	f.t.Helper()
	holds := make([]part, workers)
	for i := range holds {
		holds[i] = f.gated(fmt.Sprintf("H%d", i))
		f.submit(scheduler.Get, holds[i])
	}
	synctest.Wait()
	require.Equal(f.t, workers, f.pool.Running(), "every worker holds a gated get")
	return holds
}

// gets returns quick parts named G<from> … G<to>.
func gets(from, to int) []part {
	var out []part
	for i := from; i <= to; i++ {
		out = append(out, quick(fmt.Sprintf("G%d", i)))
	}
	return out
}

func TestGetsGoBeforePuts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1)
		holds := f.holdWorkers(1)
		f.submit(scheduler.Put, quick("P1"))
		f.submit(scheduler.Get, quick("G1"), quick("G2"))
		f.submit(scheduler.Put, quick("P2"))
		f.submit(scheduler.Get, quick("G3"))
		f.open(holds...)
		synctest.Wait()
		assert.Equal(t, []string{"H0", "G1", "G2", "G3", "P1", "P2"}, f.rec.order())
	})
}

func TestFIFOWithinAKind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1)
		holds := f.holdWorkers(1)
		for i := 1; i <= 3; i++ {
			f.submit(scheduler.Put, quick(fmt.Sprintf("P%d", i)))
			f.submit(scheduler.Get, quick(fmt.Sprintf("G%d", i)))
		}
		f.open(holds...)
		synctest.Wait()
		// Three gets pass the waiting puts (fewer than four), then the
		// puts go in their own order.
		assert.Equal(t, []string{"H0", "G1", "G2", "G3", "P1", "P2", "P3"}, f.rec.order())
	})
}

func TestFifthGetWaitsForAPutFourGetsPassed(t *testing.T) {
	for _, workers := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, workers)
				holds := f.holdWorkers(workers)
				f.submit(scheduler.Put, quick("P1"))
				f.submit(scheduler.Get, gets(1, 6)...)
				f.open(holds[0]) // one worker comes free; the others stay held
				synctest.Wait()
				assert.Equal(t, []string{"G1", "G2", "G3", "G4", "P1", "G5", "G6"}, f.rec.order()[workers:])
			})
		})
	}
}

func TestCountStartsAgainAfterEachPut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1)
		holds := f.holdWorkers(1)
		f.submit(scheduler.Put, quick("P1"), quick("P2"))
		f.submit(scheduler.Get, gets(1, 10)...)
		f.open(holds...)
		synctest.Wait()
		assert.Equal(t, []string{
			"H0", "G1", "G2", "G3", "G4", "P1", "G5", "G6", "G7", "G8", "P2", "G9", "G10",
		}, f.rec.order())
	})
}

func TestGetsTakenWithNoPutQueuedDoNotCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1)
		holds := f.holdWorkers(1)
		g1 := f.gated("G1")
		f.submit(scheduler.Get, g1)
		f.open(holds...)
		synctest.Wait()
		require.Equal(t, []string{"H0", "G1"}, f.rec.order(), "G1 was taken while no put was queued")

		f.submit(scheduler.Put, quick("P1"))
		f.submit(scheduler.Get, gets(2, 7)...)
		f.open(g1)
		synctest.Wait()
		assert.Equal(t, []string{"G2", "G3", "G4", "G5", "P1", "G6", "G7"}, f.rec.order()[2:])
	})
}

func TestCancellingEveryPutStartsTheCountAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1)
		holds := f.holdWorkers(1)
		f.submit(scheduler.Put, part{name: "P1", owner: 1})
		g3 := f.gated("G3")
		f.submit(scheduler.Get, quick("G1"), quick("G2"), g3)
		f.open(holds...)
		synctest.Wait()
		require.Equal(t, []string{"H0", "G1", "G2", "G3"}, f.rec.order(), "three gets passed P1")

		gone := f.pool.Cancel(func(p part) bool { return p.owner == 1 })
		require.Equal(t, []string{"P1"}, names(gone))

		f.submit(scheduler.Put, quick("P2"))
		f.submit(scheduler.Get, gets(4, 9)...)
		f.open(g3)
		synctest.Wait()
		assert.Equal(t, []string{"G4", "G5", "G6", "G7", "P2", "G8", "G9"}, f.rec.order()[4:])
	})
}

func TestCancellingSomePutsKeepsTheCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 1)
		holds := f.holdWorkers(1)
		f.submit(scheduler.Put, part{name: "P1", owner: 1}, quick("P2"))
		g3 := f.gated("G3")
		f.submit(scheduler.Get, quick("G1"), quick("G2"), g3)
		f.open(holds...)
		synctest.Wait()
		require.Equal(t, []string{"H0", "G1", "G2", "G3"}, f.rec.order(), "three gets passed the puts")

		gone := f.pool.Cancel(func(p part) bool { return p.owner == 1 })
		require.Equal(t, []string{"P1"}, names(gone))

		// P2 still waits and was passed three times: one more get, then P2.
		f.submit(scheduler.Get, gets(4, 6)...)
		f.open(g3)
		synctest.Wait()
		assert.Equal(t, []string{"G4", "P2", "G5", "G6"}, f.rec.order()[4:])
	})
}

func TestGetsTakenWhileThePutLimitHoldsPutsBackDoNotCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Two workers: the put limit is one. P1 holds it, so P2 cannot
		// start and the gets that run meanwhile do not pass it.
		f := newFixture(t, 2)
		p1 := f.gated("P1")
		f.submit(scheduler.Put, p1)
		synctest.Wait()
		f.submit(scheduler.Put, quick("P2"))
		g5 := f.gated("G5")
		f.submit(scheduler.Get, append(gets(1, 4), g5)...)
		synctest.Wait()
		require.Equal(t, []string{"P1", "G1", "G2", "G3", "G4", "G5"}, f.rec.order(),
			"gets run beside the put that holds the limit")
		require.Equal(t, 1, f.pool.Queued(), "P2 waits for the put limit")

		f.submit(scheduler.Get, gets(6, 10)...)
		f.open(p1) // P2 may start now, and no get has passed it yet
		synctest.Wait()
		assert.Equal(t, []string{"G6", "G7", "G8", "G9", "P2", "G10"}, f.rec.order()[6:])
	})
}

func TestPutLimit(t *testing.T) {
	for _, tc := range []struct{ workers, limit int }{{1, 1}, {2, 1}, {3, 2}, {4, 3}, {8, 7}} {
		t.Run(fmt.Sprintf("workers=%d", tc.workers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, tc.workers)
				puts := make([]part, tc.limit+2)
				for i := range puts {
					puts[i] = f.gated(fmt.Sprintf("P%d", i))
				}
				f.submit(scheduler.Put, puts...)
				synctest.Wait()
				assert.Equal(t, tc.limit, f.pool.Running(), "puts running")
				assert.Equal(t, 2, f.pool.Queued(), "puts held back")
				// Several workers start at once, so only the set is fixed:
				// the oldest puts.
				assert.ElementsMatch(t, names(puts[:tc.limit]), f.rec.order())

				// Each put that returns lets exactly one more start.
				f.open(puts[0])
				synctest.Wait()
				assert.Equal(t, tc.limit, f.pool.Running(), "puts running after one returned")
				order := f.rec.order()
				assert.Len(t, order, tc.limit+1)
				assert.Equal(t, puts[tc.limit].name, order[len(order)-1], "the oldest queued put")
			})
		})
	}
}

func TestAGetNeverWaitsBehindPutsAlone(t *testing.T) {
	for _, workers := range []int{2, 3, 4, 8} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, workers)
				puts := make([]part, 2*workers)
				for i := range puts {
					puts[i] = f.gated(fmt.Sprintf("P%d", i))
				}
				f.submit(scheduler.Put, puts...)
				synctest.Wait()
				require.Equal(t, workers-1, f.pool.Running(), "puts fill all but one worker")

				// Gets arrive one after another; each starts while every
				// put still holds its worker.
				for i := 1; i <= 6; i++ {
					name := fmt.Sprintf("G%d", i)
					f.submit(scheduler.Get, quick(name))
					synctest.Wait()
					order := f.rec.order()
					assert.Equal(t, name, order[len(order)-1], "%s started beside the puts", name)
				}
				assert.Len(t, f.rec.order(), workers-1+6)
				assert.Equal(t, workers-1, f.pool.Running(), "the puts still run")
			})
		})
	}
}

func TestOneWorkerGetWaitsForTheRunningPut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// With one worker the put limit is still one: a running put holds
		// the only worker, and the get waits for it (documented).
		f := newFixture(t, 1)
		p1 := f.gated("P1")
		f.submit(scheduler.Put, p1)
		synctest.Wait()
		f.submit(scheduler.Put, quick("P2"))
		f.submit(scheduler.Get, quick("G1"))
		synctest.Wait()
		require.Equal(t, []string{"P1"}, f.rec.order(), "G1 waits for the worker P1 holds")
		f.open(p1)
		synctest.Wait()
		assert.Equal(t, []string{"P1", "G1", "P2"}, f.rec.order(), "the get goes first once the worker is free")
	})
}
