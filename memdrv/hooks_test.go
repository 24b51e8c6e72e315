package memdrv_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

func TestCrash(t *testing.T) {
	for _, dir := range []memdrv.Direction{memdrv.PutDir, memdrv.GetDir} {
		t.Run(dir.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs bytes.Buffer
				f := newFixture(t, memdrv.Options{Workers: 1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
				for _, k := range []string{"a", "b", "c"} {
					f.store.Set("stored-"+k, pattern(slotBytes, 1))
				}
				f.d.Crash(dir)
				rows := []contract.Row{f.row(0, "stored-a"), f.row(1, "stored-b"), f.row(2, "stored-c")}
				var op contract.Operation
				if dir == memdrv.PutDir {
					rows[0].Name, rows[1].Name, rows[2].Name = []byte("a"), []byte("b"), []byte("c")
					op = f.put(rows...)
				} else {
					op = f.get(rows...)
				}
				synctest.Wait()
				// One worker: the first row crashed, the other two were
				// never taken and end Fault with it.
				assert.Equal(t, contract.OpState{Rows: statuses(contract.Fault, contract.Fault, contract.Fault), Access: contract.Ended}, op.Poll(nil))
				assert.Equal(t, 3, f.store.Len(), "no put stored anything")
				assert.True(t, untouched(f.mem.Bytes), "no get wrote anything")
				assert.Equal(t, 1, strings.Count(logs.String(), "staged crash"),
					"one store call crashed; the rows no worker took never reached the store")

				// The other direction still works.
				f.write(3, 4)
				var other contract.Operation
				if dir == memdrv.PutDir {
					other = f.get(f.row(3, "stored-a"))
				} else {
					other = f.put(f.row(3, "x"))
				}
				synctest.Wait()
				assert.Equal(t, statuses(contract.Ready), other.Poll(nil).Rows)
				f.teardown()
			})
		})
	}
}

func TestOneWorkerRunsRowsInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{Workers: 1})
		var order []string
		f.d.OnRowEnd(func(e memdrv.RowEnd) contract.RowStatus {
			order = append(order, e.Dir.String()+":"+e.Key)
			return e.Status
		})
		resume := f.d.Pause()
		f.put(f.row(0, "a"), f.row(1, "b"))
		f.get(f.row(2, "c"))
		f.put(f.row(3, "d"))
		f.get(f.row(4, "a"), f.row(5, "e"))
		resume()
		synctest.Wait()
		assert.Equal(t, []string{"put:a", "put:b", "get:c", "put:d", "get:a", "get:e"}, order)
		f.teardown()
	})
}

func TestAHeldRowDelaysNoOther(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{Workers: 2})
		f.store.Set("held", pattern(slotBytes, 1))
		f.store.Set("free", pattern(slotBytes, 2))
		first := f.d.Hold(memdrv.GetDir)
		held := f.get(f.row(0, "held"))
		require.NoError(t, first.Held(t.Context()))

		// A later gate replaces the first for rows taken from now on;
		// releasing it lets them pass while the first still holds.
		second := f.d.Hold(memdrv.GetDir)
		second.Release()
		free := f.get(f.row(1, "free"))
		put := f.put(f.row(2, "p"))
		synctest.Wait()
		assert.Equal(t, statuses(contract.Ready), free.Poll(nil).Rows)
		assert.Equal(t, statuses(contract.Ready), put.Poll(nil).Rows)
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Pending), Access: contract.Open}, held.Poll(nil))
		assert.Equal(t, 1, f.d.Live())

		first.Release()
		first.Release() // idempotent
		synctest.Wait()
		assert.Equal(t, statuses(contract.Ready), held.Poll(nil).Rows)
		f.teardown()
	})
}

func TestGateHeldWaitsWithinContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		gate := f.d.Hold(memdrv.PutDir)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		err := gate.Held(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), "no put row reached the gate")
		gate.Release()
		f.teardown()
	})
}

func TestOnChangeMayCallTheDriver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{Workers: 2})
		var (
			mu   sync.Mutex
			seen []contract.OpState
			op   contract.Operation
		)
		ready := make(chan struct{})
		onChange := func() {
			<-ready
			st := op.Poll(nil) // would deadlock if called under the driver's lock
			_ = f.d.Live()
			mu.Lock()
			seen = append(seen, st)
			mu.Unlock()
		}
		var err error
		op, err = f.d.Put(batch(f.row(0, "a"), f.row(1, "b")), onChange)
		require.NoError(t, err)
		close(ready)
		synctest.Wait()
		require.Len(t, seen, 2)
		last := seen[0]
		if seen[1].Settled() {
			last = seen[1]
		}
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Ready, contract.Ready), Access: contract.Ended}, last)
		f.teardown()
	})
}

func TestOnChangePanicIsContained(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		f := newFixture(t, memdrv.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		op, err := f.d.Put(batch(f.row(0, "a")), func() { panic("callback bug") })
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Ready), Access: contract.Ended}, op.Poll(nil))
		assert.Contains(t, logs.String(), "callback bug")
		f.teardown()
	})
}

func TestLiveAndUnprovableCounters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		f.keep() // the unprovable get pins the region
		f.store.Set("u", pattern(slotBytes, 1))
		f.d.UnprovableGets("u")
		resume := f.d.Pause()
		f.put(f.row(0, "a"))
		f.get(f.row(1, "u"))
		assert.Equal(t, 2, f.d.Live())
		assert.Zero(t, f.d.Unprovable())
		resume()
		synctest.Wait()
		assert.Zero(t, f.d.Live())
		assert.Equal(t, 1, f.d.Unprovable())
	})
}

func TestHintsSeen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{Hints: true})
		n, last := f.d.HintsSeen()
		assert.Zero(t, n)
		assert.Nil(t, last)
		for _, h := range []contract.Hint{"first", nil, 42} {
			_, err := f.d.Get(batch(f.row(0, "k")), h, nil)
			require.NoError(t, err)
		}
		n, last = f.d.HintsSeen()
		assert.Equal(t, 2, n)
		assert.Equal(t, 42, last)
		assert.Equal(t, 3, f.d.Admitted(memdrv.GetDir))
		synctest.Wait()
		f.teardown()
	})
}

func TestDirectionHooksRefuseBadDirections(t *testing.T) {
	d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	for _, dir := range []memdrv.Direction{0, 3} {
		assert.Panics(t, func() { d.Hold(dir) }, "%v", dir)
		assert.Panics(t, func() { d.Crash(dir) }, "%v", dir)
		assert.Panics(t, func() { d.Admitted(dir) }, "%v", dir)
	}
	assert.Equal(t, "Direction(3)", memdrv.Direction(3).String())
}

// Releasing a gate that a later Hold replaced leaves the later gate in
// force: rows taken afterwards still block until it is released.
func TestReleasingAReplacedGateKeepsTheLaterHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{Workers: 2})
		f.store.Set("k", pattern(slotBytes, 1))
		first := f.d.Hold(memdrv.GetDir)
		second := f.d.Hold(memdrv.GetDir)
		first.Release()
		op := f.get(f.row(0, "k"))
		require.NoError(t, second.Held(t.Context()))
		synctest.Wait()
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Pending), Access: contract.Open}, op.Poll(nil),
			"held at the later gate")
		second.Release()
		synctest.Wait()
		assert.Equal(t, contract.OpState{Rows: statuses(contract.Ready), Access: contract.Ended}, op.Poll(nil))
		f.teardown()
	})
}
