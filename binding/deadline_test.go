package binding

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/patience"
)

// notDone fails the test if ch is closed: the attempt quiesced.
func notDone(t *testing.T, a contract.Attempt, why string) {
	t.Helper()
	assert.False(t, a.Quiesced(), why)
	select {
	case <-a.Done():
		t.Errorf("Done closed: %s", why)
	default:
	}
}

// A publish whose deadline passes while one of its rows is held inside
// the store: the outcome is forced at the deadline (the rows already
// final keep their verdicts, the held one reads Pending, the fault wraps
// ErrDeadline), and quiescence comes only once the gate lets the row go.
func TestDeadlineForcesTheOutcomeWhileARowIsHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := memdrv.New(memdrv.NewStore(), memdrv.Options{Workers: 2})
		l := newLender(t, 8, contract.Host)
		var wakes atomic.Int32
		b := memBackend(t, d, l, Config{MaxRowsPerCall: 1, Wake: func() { wakes.Add(1) }})
		gate := d.HoldKeys(memdrv.PutDir, memKey(t, b, "n1"))
		for i := range 3 {
			l.fill(0, i, byte(i))
		}

		submitted := time.Now()
		a, err := b.PublishBy(rowsView(3), nil, submitted.Add(time.Second))
		require.NoError(t, err)
		require.NoError(t, gate.Held(context.Background()))
		synctest.Wait()
		_, known := a.Outcome()
		require.False(t, known, "the outcome waits for the held row until the deadline")

		out, err := a.Wait(context.Background())
		require.NoError(t, err)
		assert.Equal(t, time.Second, time.Since(submitted), "forced at the deadline, not before or after")
		require.ErrorIs(t, out.Fault, ErrDeadline)
		require.ErrorIs(t, out.Fault, ErrOutcomeForced)
		assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Pending, contract.Ready}, out.Rows)
		assert.Equal(t, []bool{true, false, true}, out.Delivered)
		synctest.Wait() // Wake runs after the outcome is published, outside the lock
		assert.EqualValues(t, 1, wakes.Load(), "woken for the forced outcome")

		synctest.Wait()
		notDone(t, a, "the held row still reads its slot")
		st := b.Stats()
		assert.EqualValues(t, 1, st.CallsInFlight)
		assert.EqualValues(t, 1, st.RowsLent)
		assert.EqualValues(t, lenderSlotBytes, st.BytesLent)
		assert.Equal(t, memdrv.RegionRows{Running: 1}, d.RowsIn(l.Regions()[0]), "the held row runs on: Cancel leaves a taken row alone")

		gate.Release()
		<-a.Done()
		synctest.Wait() // Wake runs after Done is closed, outside the lock
		assert.True(t, a.Quiesced())
		again, _ := a.Outcome()
		assert.Equal(t, out.Rows, again.Rows, "a forced outcome never changes")
		assert.Equal(t, out.Delivered, again.Delivered)
		st = b.Stats()
		assert.EqualValues(t, 3, st.Rows[contract.Ready], "the held row's verdict is counted when it comes")
		assert.Zero(t, st.RowsLent)
		assert.EqualValues(t, 2, wakes.Load(), "woken once more for quiescence")

		require.NoError(t, b.Close(context.Background()))
		require.NoError(t, d.Close())
		assert.Equal(t, 1, l.Released())
	})
}

// A fetch whose deadline passes while its row is held half way through
// its transfer (the store's gate): forced at the deadline, Pending,
// quiesced only once the transfer ended.
func TestDeadlineForcesAFetchHeldMidTransfer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memdrv.NewStore()
		d := memdrv.New(store, memdrv.Options{})
		l := newLender(t, 4, contract.Host)
		b := memBackend(t, d, l, Config{})
		object := make([]byte, lenderSlotBytes)
		for i := range object {
			object[i] = byte(i)
		}
		store.Set(memKey(t, b, "n0"), object)
		gate := store.HoldTransfers(memdrv.GetDir)

		a, err := b.FetchBy(rowsView(1), nil, time.Now().Add(time.Second))
		require.NoError(t, err)
		require.NoError(t, gate.Held(context.Background()))
		out, err := a.Wait(context.Background())
		require.NoError(t, err)
		require.ErrorIs(t, out.Fault, ErrDeadline)
		assert.Equal(t, []contract.RowStatus{contract.Pending}, out.Rows)
		synctest.Wait()
		notDone(t, a, "the transfer is half way through the slot")

		gate.Release()
		<-a.Done()
		assert.Equal(t, object, l.mems[0].Slot(0), "the transfer ran to its end after the outcome")
		require.NoError(t, b.Close(context.Background()))
		require.NoError(t, d.Close())
	})
}

// At the deadline the rows no worker took are cancelled in the driver:
// the attempt quiesces with the workers still paused, its rows Pending in
// the outcome (they had no verdict at the deadline) and Cancelled in the
// driver, and nothing stored.
func TestDeadlineCancelsTheQueuedRows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memdrv.NewStore()
		d := memdrv.New(store, memdrv.Options{})
		l := newLender(t, 4, contract.Host)
		b := memBackend(t, d, l, Config{MaxRowsPerCall: 2})
		resume := d.Pause()
		defer resume()

		a, err := b.PublishBy(rowsView(3), nil, time.Now().Add(time.Second))
		require.NoError(t, err)
		out, err := a.Wait(context.Background())
		require.NoError(t, err)
		require.ErrorIs(t, out.Fault, ErrDeadline)
		assert.Equal(t, []contract.RowStatus{contract.Pending, contract.Pending, contract.Pending}, out.Rows)
		<-a.Done() // no resume: the driver ended the queued rows itself
		assert.Zero(t, d.Live())
		assert.EqualValues(t, 3, b.Stats().Rows[contract.Cancelled])
		for _, name := range []string{"n0", "n1", "n2"} {
			_, ok := store.Object(memKey(t, b, name))
			assert.False(t, ok, "%s: a cancelled row stores nothing", name)
		}
		require.NoError(t, b.Close(context.Background()))
	})
}

// A deadline that passes while the submitter is inside the driver's Get:
// no later call is handed over (those rows end Cancelled), and the call
// inside Get is asked to Cancel as soon as its operation arrives.
func TestDeadlineStopsTheHandover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newFake(getPut)
		b, hold := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 1})
		d.enter = func(n int, _ direction, _ contract.RowBatch, _ func()) (contract.Operation, error, bool) {
			if n == 1 {
				time.Sleep(2 * time.Second) // a slow admission: the deadline passes inside it
			}
			return nil, nil, false
		}
		a, err := b.FetchBy(rowsView(3), nil, time.Now().Add(time.Second))
		require.NoError(t, err)
		out, ok := a.Outcome()
		require.True(t, ok, "known since the deadline, before FetchBy returned")
		require.ErrorIs(t, out.Fault, ErrDeadline)
		assert.Equal(t, []contract.RowStatus{contract.Pending, contract.Cancelled, contract.Cancelled}, out.Rows)
		assert.Equal(t, 1, d.Calls(), "nothing handed over after the deadline")
		op := d.Ops()[0]
		assert.Equal(t, 1, op.Cancels(), "the call inside Get was asked to cancel as it arrived")
		notDone(t, a, "the call handed over has not ended")

		op.finish(contract.Ended, contract.Ready)
		<-a.Done()
		again, _ := a.Outcome()
		assert.Equal(t, []bool{false, false, false}, again.Delivered, "a verdict after the deadline changes nothing")
		st := b.Stats()
		assert.EqualValues(t, 1, st.Rows[contract.Ready])
		assert.EqualValues(t, 2, st.Rows[contract.Cancelled])
		assert.Nil(t, b.Shutdown(context.Background()))
		assert.Equal(t, 1, hold.Released())
	})
}

// A deadline that has passed at submission forces the outcome before any
// call reaches the driver: every row Cancelled, quiesced at once.
func TestDeadlinePassedAtSubmission(t *testing.T) {
	for _, tc := range []struct {
		name string
		ago  time.Duration
	}{
		{"an hour ago", time.Hour},
		{"this instant", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := newFake(getPut)
				var wakes atomic.Int32
				b, _ := fakeBackend(t, d, 1, Config{Wake: func() { wakes.Add(1) }})
				for _, submit := range []func() (contract.Attempt, error){
					func() (contract.Attempt, error) { return b.PublishBy(rowsView(2), nil, time.Now().Add(-tc.ago)) },
					func() (contract.Attempt, error) { return b.FetchBy(rowsView(2), nil, time.Now().Add(-tc.ago)) },
				} {
					a, err := submit()
					require.NoError(t, err)
					assert.True(t, a.Quiesced())
					out, ok := a.Outcome()
					require.True(t, ok)
					require.ErrorIs(t, out.Fault, ErrDeadline)
					assert.Equal(t, []contract.RowStatus{contract.Cancelled, contract.Cancelled}, out.Rows)
				}
				assert.Zero(t, d.Calls())
				assert.EqualValues(t, 2, wakes.Load(), "one wake an attempt: its outcome and quiescence together")
				assert.EqualValues(t, 4, b.Stats().Rows[contract.Cancelled])
			})
		})
	}
}

// A deadline that never passes changes nothing: the outcome is the one
// a plain submission gets, the timer goes once the outcome is known, and
// the deadline passing later touches nothing.
func TestDeadlineThatNeverPassesChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memdrv.NewStore()
		d := memdrv.New(store, memdrv.Options{})
		l := newLender(t, 8, contract.Host)
		var wakes atomic.Int32
		b := memBackend(t, d, l, Config{MaxRowsPerCall: 2, Wake: func() { wakes.Add(1) }})
		store.Set(memKey(t, b, "n1"), make([]byte, lenderSlotBytes))

		plain, err := b.Fetch(rowsView(3), nil)
		require.NoError(t, err)
		<-plain.Done()
		synctest.Wait() // Wake runs after Done is closed, outside the lock
		want, _ := plain.Outcome()
		wakesPlain := wakes.Load()

		by, err := b.FetchBy(rowsView(3), nil, time.Now().Add(time.Hour))
		require.NoError(t, err)
		<-by.Done()
		synctest.Wait()
		got, _ := by.Outcome()
		assert.Equal(t, want, got)
		assert.Equal(t, []contract.RowStatus{contract.Miss, contract.Ready, contract.Miss}, got.Rows)
		assert.NoError(t, got.Fault)
		assert.Equal(t, 2*wakesPlain, wakes.Load(), "as many wakes as the plain fetch")
		b.mu.Lock()
		assert.Nil(t, by.(*attempt).deadline, "the timer goes with the outcome")
		b.mu.Unlock()

		before := b.Stats()
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		again, _ := by.Outcome()
		assert.Equal(t, got, again)
		assert.Equal(t, before, b.Stats())
		assert.Equal(t, 2*wakesPlain, wakes.Load())
		require.NoError(t, b.Close(context.Background()))
	})
}

// A fault before the deadline stays in the forced outcome's fault, and
// the faulted row keeps its verdict.
func TestDeadlineKeepsAnEarlierFault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memdrv.NewStore()
		d := memdrv.New(store, memdrv.Options{})
		l := newLender(t, 4, contract.Host)
		b := memBackend(t, d, l, Config{MaxRowsPerCall: 1})
		for _, n := range []string{"n0", "n1"} {
			store.Set(memKey(t, b, n), make([]byte, lenderSlotBytes))
		}
		gate := d.HoldKeys(memdrv.GetDir, memKey(t, b, "n0"))
		d.FailReads(memKey(t, b, "n1"))

		a, err := b.FetchBy(rowsView(2), nil, time.Now().Add(time.Second))
		require.NoError(t, err)
		out, err := a.Wait(context.Background())
		require.NoError(t, err)
		require.ErrorIs(t, out.Fault, ErrDeadline)
		require.ErrorIs(t, out.Fault, ErrRowFault, "the fault of row 1 before the deadline")
		assert.Equal(t, []contract.RowStatus{contract.Pending, contract.Fault}, out.Rows)
		gate.Release()
		<-a.Done()
		require.NoError(t, b.Close(context.Background()))
	})
}

// Shutdown and a deadline each force an outcome once: whichever comes
// first writes the fault, and the other changes nothing.
func TestDeadlineAndShutdownForceOnce(t *testing.T) {
	t.Run("deadline first", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			d := newFake(getPut)
			b, _ := fakeBackend(t, d, 1, Config{})
			a, err := b.FetchBy(rowsView(1), nil, time.Now().Add(time.Second))
			require.NoError(t, err)
			first, err := a.Wait(context.Background())
			require.NoError(t, err)
			require.ErrorIs(t, first.Fault, ErrDeadline)
			done := make(chan []string)
			go func() { done <- b.Shutdown(context.Background()) }()
			synctest.Wait()
			after, _ := a.Outcome()
			assert.Same(t, first.Fault, after.Fault, "Shutdown forced nothing more")
			d.Ops()[0].finish(contract.Ended, contract.Ready)
			assert.Nil(t, <-done)
		})
	})
	t.Run("shutdown first", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			d := newFake(getPut)
			b, _ := fakeBackend(t, d, 1, Config{})
			a, err := b.FetchBy(rowsView(1), nil, time.Now().Add(time.Second))
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			b.Shutdown(ctx)
			first, ok := a.Outcome()
			require.True(t, ok)
			require.ErrorIs(t, first.Fault, ErrOutcomeForced)
			require.NotErrorIs(t, first.Fault, ErrDeadline)
			time.Sleep(2 * time.Second)
			after, _ := a.Outcome()
			assert.Same(t, first.Fault, after.Fault, "the deadline forced nothing more")
			d.Ops()[0].finish(contract.Ended, contract.Ready)
			assert.Nil(t, b.Shutdown(context.Background()))
		})
	})
}

// Deadlines racing the verdicts, from many goroutines, over a real
// store (run with -race): every attempt quiesces; an outcome holds
// Pending rows only when forced, and then its fault says so; a row is
// delivered exactly when Ready; and once all quiesced nothing is lent.
func TestDeadlinesRacingVerdicts(t *testing.T) {
	store := memdrv.NewStore()
	d := memdrv.New(store, memdrv.Options{Workers: 3})
	const slots, rows = 64, 4
	l := newLender(t, slots, contract.Host)
	b := memBackend(t, d, l, Config{MaxRowsPerCall: 2})
	ctx, cancel := patience.Bound{Span: patience.Wait(), What: "deadline attempts quiescing", Logf: t.Logf}.Context(context.Background())
	defer cancel()

	var wg sync.WaitGroup
	errs := make(chan error, slots/rows)
	for w := range slots / rows {
		wg.Go(func() {
			for round := range 20 {
				v := contract.View{Groups: []contract.Group{{}}}
				for r := range rows {
					v.Groups[0].Slots = append(v.Groups[0].Slots, int32(w*rows+r))
					v.Groups[0].Names = append(v.Groups[0].Names, fmt.Appendf(nil, "w%d-r%d-%d", w, round, r))
				}
				deadline := time.Now().Add(time.Duration(round%5) * 50 * time.Microsecond)
				var a contract.Attempt
				var err error
				if round%2 == 0 {
					a, err = b.PublishBy(v, nil, deadline)
				} else {
					a, err = b.FetchBy(v, nil, deadline)
				}
				if err != nil {
					errs <- err
					return
				}
				select {
				case <-a.Done():
				case <-ctx.Done():
					errs <- fmt.Errorf("worker %d round %d: not quiesced: %w", w, round, ctx.Err())
					return
				}
				out, _ := a.Outcome()
				if err := checkOutcome(out); err != nil {
					errs <- fmt.Errorf("worker %d round %d: %w", w, round, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := b.Stats()
	assert.Zero(t, st.AttemptsOpen)
	assert.Zero(t, st.CallsInFlight)
	assert.Zero(t, st.RowsLent)
	require.NoError(t, b.Close(ctx))
	require.NoError(t, d.Close())
}

// checkOutcome holds an outcome to what a deadline may make of it.
func checkOutcome(o contract.Outcome) error {
	forced := errors.Is(o.Fault, ErrOutcomeForced)
	if forced != errors.Is(o.Fault, ErrDeadline) {
		return fmt.Errorf("forced without the deadline, or the other way: %v", o.Fault)
	}
	for i, s := range o.Rows {
		if s == contract.Pending && !forced {
			return fmt.Errorf("row %d Pending in an outcome that was not forced (fault %v)", i, o.Fault)
		}
		if o.Delivered[i] != (s == contract.Ready) {
			return fmt.Errorf("row %d: delivered %v with status %v", i, o.Delivered[i], s)
		}
	}
	return nil
}
