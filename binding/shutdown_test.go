package binding

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// Shutdown never calls the driver: when what is left can never change it
// answers without a single driver call (nor does the retiring goroutine
// make one); otherwise it waits within ctx while every driver method
// blocks, which it could not do if it called one.
func TestShutdownNeverCallsTheDriver(t *testing.T) {
	t.Run("nothing can change", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := watch(newFake(getPut))
			b, hold := fakeBackend(t, w, 1, Config{})
			a, err := b.Fetch(rowsView(2), nil)
			require.NoError(t, err)
			w.fake.Ops()[0].finish(contract.Unprovable, contract.Fault)
			before := w.Calls()

			assert.Equal(t, []string{"attempt 1 (fetch)", "region 0"}, b.Shutdown(context.Background()))
			synctest.Wait()
			assert.Equal(t, before, w.Calls(), "no driver call, from Shutdown or after it")
			assert.False(t, a.Quiesced())
			assert.Zero(t, hold.Released())
		})
	})
	t.Run("a frozen driver", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := watch(newFake(getPut))
			var wakes atomic.Int32
			b, hold := fakeBackend(t, w, 1, Config{Wake: func() { wakes.Add(1) }})
			a, err := b.Fetch(rowsView(2), nil)
			require.NoError(t, err)
			op := w.fake.Ops()[0]
			thaw := w.freeze()
			before := w.Calls()

			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			labels := b.Shutdown(ctx)
			assert.Equal(t, 5*time.Second, time.Since(start), "Shutdown waited within ctx, not on the driver")
			assert.Equal(t, []string{"attempt 1 (fetch)", "region 0"}, labels)
			out, ok := a.Outcome()
			require.True(t, ok)
			require.ErrorIs(t, out.Fault, ErrOutcomeForced)
			assert.Equal(t, []bool{false, false}, out.Delivered)
			assert.EqualValues(t, 1, wakes.Load(), "woken for the forced outcome")
			assert.Equal(t, before+1, w.Calls(), "only the retiring goroutine called: Cancel, and it is stuck there")

			thaw()
			synctest.Wait()
			assert.Equal(t, 1, op.Cancels(), "the retiring goroutine asked the driver to cancel")
			op.finish(contract.Ended, contract.Ready)
			<-a.Done()
			out, _ = a.Outcome()
			assert.Equal(t, []bool{false, false}, out.Delivered, "a forced outcome never changes")
			assert.Nil(t, b.Shutdown(context.Background()))
			<-b.Closed()
			assert.Equal(t, 1, hold.Released())
			ev := w.fake.Events()
			assert.Equal(t, []string{"drain true", "unregister 1", "release"}, ev[len(ev)-3:],
				"drained, then every region unregistered, then the hold released")
		})
	})
}

// Shutdown in the middle of a handover stops it: no later call reaches the
// driver, and the rows not handed over end Cancelled.
func TestShutdownDuringAHandoverStopsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newFake(getPut)
		b, hold := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 2})
		var labels []string
		d.enter = func(n int, _ direction, _ contract.RowBatch, _ func()) (contract.Operation, error, bool) {
			if n == 1 {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				labels = b.Shutdown(ctx) // from another part of the owner's program
			}
			return nil, nil, false
		}
		a, err := b.Fetch(rowsView(6), nil)
		require.NoError(t, err)
		assert.Equal(t, []string{"attempt 1 (fetch)", "region 0"}, labels)
		assert.Equal(t, 1, d.Calls(), "nothing after Shutdown reached the driver")
		assert.EqualValues(t, 4, b.Stats().Rows[contract.Cancelled])
		out, ok := a.Outcome()
		require.True(t, ok)
		require.ErrorIs(t, out.Fault, ErrOutcomeForced)

		d.Ops()[0].finish(contract.Ended, contract.Ready)
		<-a.Done()
		assert.Nil(t, b.Shutdown(context.Background()))
		assert.Equal(t, 1, hold.Released())
	})
}

func TestShutdownReturnsOnceWhatIsLeftCanNeverChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newFake(getPut)
		b, hold := fakeBackend(t, d, 1, Config{})
		stuck, err := b.Fetch(rowsView(1), nil)
		require.NoError(t, err)
		running, err := b.Publish(contract.View{Groups: []contract.Group{{Slots: []int32{9}, Names: [][]byte{[]byte("p")}}}}, nil)
		require.NoError(t, err)
		ops := d.Ops()
		ops[0].finish(contract.Unprovable, contract.Fault)

		start := time.Now()
		var labels []string
		returned := make(chan struct{})
		go func() {
			labels = b.Shutdown(context.Background())
			close(returned)
		}()
		synctest.Wait()
		select {
		case <-returned:
			t.Fatal("returned while an attempt could still quiesce")
		default:
		}
		ops[1].finish(contract.Ended, contract.Ready)
		<-returned
		assert.Zero(t, time.Since(start), "returned as soon as nothing could change")
		assert.Equal(t, []string{"attempt 1 (fetch)", "region 0"}, labels)
		assert.True(t, running.Quiesced())
		assert.False(t, stuck.Quiesced())
		assert.Zero(t, hold.Released())
	})
}

func TestShutdownRetriesDrainAndUnregister(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newFake(getPut)
		d.drainFalse = 2
		logs := &logRecords{}
		b, hold := fakeBackend(t, d, 2, Config{Logger: slogOf(logs)})
		d.refuseUnregister = 3
		assert.Nil(t, b.Shutdown(context.Background()))
		assert.Equal(t, 1, hold.Released())
		assert.Zero(t, d.Live())
		assert.Equal(t, []string{
			"drain false", "drain false", "drain true",
			"unregister 2 refused", "unregister 1 refused", "unregister 2 refused", "unregister 1", "unregister 2",
			"release",
		}, d.Events()[2:])
		assert.Equal(t, 1, logs.Count("kvshare/binding: driver did not drain after every attempt quiesced; retrying"))
	})
}

// A driver that does not drain at once is asked again, with one warning
// however many times it refuses.
func TestShutdownWarnsOnceAboutADriverThatDoesNotDrain(t *testing.T) {
	for _, refusals := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprintf("refusals=%d", refusals), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := newFake(getPut)
				d.drainFalse = refusals
				logs := &logRecords{}
				b, hold := fakeBackend(t, d, 1, Config{Logger: slogOf(logs)})
				assert.Nil(t, b.Shutdown(context.Background()))
				assert.Equal(t, 1, hold.Released())
				drains := 0
				for _, e := range d.Events() {
					if strings.HasPrefix(e, "drain ") {
						drains++
					}
				}
				assert.Equal(t, refusals+1, drains, "asked until it drained")
				assert.Equal(t, 1, logs.Count("kvshare/binding: driver did not drain after every attempt quiesced; retrying"))
			})
		})
	}
}

func TestShutdownTwiceAndConcurrently(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newFake(getPut)
		b, hold := fakeBackend(t, d, 1, Config{})
		_, err := b.Publish(rowsView(1), nil)
		require.NoError(t, err)
		answers := make(chan []string, 3)
		for range 3 {
			go func() { answers <- b.Shutdown(context.Background()) }()
		}
		synctest.Wait()
		assert.Empty(t, answers, "all wait for the running call")
		d.Ops()[0].finish(contract.Ended, contract.Ready)
		for range 3 {
			assert.Nil(t, <-answers)
		}
		assert.Nil(t, b.Shutdown(context.Background()))
		assert.Equal(t, 1, hold.Released())
	})
}

func TestAForcedOutcomeKeepsTheEarlierFault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newFake(getPut)
		b, _ := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 1})
		a, err := b.Fetch(rowsView(2), nil)
		require.NoError(t, err)
		ops := d.Ops()
		ops[1].finish(contract.Ended, contract.Fault)
		_, ok := a.Outcome()
		require.False(t, ok, "waiting for the earlier call")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		b.Shutdown(ctx)
		out, ok := a.Outcome()
		require.True(t, ok)
		require.ErrorIs(t, out.Fault, ErrOutcomeForced)
		require.ErrorIs(t, out.Fault, ErrRowFault)
		ops[0].finish(contract.Ended, contract.Ready)
		assert.Nil(t, b.Shutdown(context.Background()))
	})
}

func TestStatsCountWhatIsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newFake(getPut)
		b, _ := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 2})
		_, err := b.Fetch(rowsView(3), nil)
		require.NoError(t, err)
		time.Sleep(7 * time.Second)
		_, err = b.Publish(contract.View{Groups: []contract.Group{{Slots: []int32{9}, Names: [][]byte{[]byte("p")}}}}, nil)
		require.NoError(t, err)
		time.Sleep(3 * time.Second)
		st := b.Stats()
		assert.EqualValues(t, 2, st.Attempts)
		assert.EqualValues(t, 2, st.AttemptsOpen)
		assert.EqualValues(t, 3, st.CallsInFlight)
		assert.EqualValues(t, 4, st.RowsLent)
		assert.EqualValues(t, 4*64, st.BytesLent)
		assert.Equal(t, 10*time.Second, st.OldestCall)

		ops := d.Ops()
		ops[0].finish(contract.Ended, contract.Ready)
		assert.Equal(t, 10*time.Second, b.Stats().OldestCall, "the second call of the fetch started with the first")
		ops[1].finish(contract.Ended, contract.Ready)
		assert.Equal(t, 3*time.Second, b.Stats().OldestCall)
		ops[2].finish(contract.Ended, contract.Declined)
		st = b.Stats()
		assert.Zero(t, st.OldestCall)
		assert.Zero(t, st.CallsInFlight)
		assert.Zero(t, st.AttemptsOpen)
		assert.EqualValues(t, 3, st.Rows[contract.Ready])
		assert.EqualValues(t, 1, st.Rows[contract.Declined])
		assert.Zero(t, st.Rows[contract.Pending])
	})
}

const slowMsg = "kvshare/binding: driver call running long"

func TestASlowCallIsLoggedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newFake(getPut)
		logs := &logRecords{}
		b, _ := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 1, Logger: slogOf(logs)})
		_, err := b.Fetch(rowsView(1), nil) // call A at 0 s
		require.NoError(t, err)
		time.Sleep(30 * time.Second)
		_, err = b.Publish(contract.View{Groups: []contract.Group{{Slots: []int32{5, 6}, Names: [][]byte{[]byte("b"), []byte("c")}}}}, nil) // B, C at 30 s
		require.NoError(t, err)
		ops := d.Ops()
		time.Sleep(20 * time.Second)
		ops[2].finish(contract.Ended, contract.Ready) // C ends at 50 s: never logged

		time.Sleep(10*time.Second - time.Nanosecond)
		synctest.Wait()
		assert.Zero(t, logs.Count(slowMsg), "not yet 60 s")
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		assert.Equal(t, 1, logs.Count(slowMsg), "A at 60 s")
		time.Sleep(30 * time.Second)
		synctest.Wait()
		assert.Equal(t, 2, logs.Count(slowMsg), "B at 90 s")
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Equal(t, 2, logs.Count(slowMsg), "each once")
		for _, op := range ops[:2] {
			op.finish(contract.Ended, contract.Ready)
		}
	})
}

func TestSlowCallThresholdIsConfigurable(t *testing.T) {
	for _, tc := range []struct {
		slow time.Duration
		want int
	}{{5 * time.Second, 1}, {-1, 0}} {
		synctest.Test(t, func(t *testing.T) {
			d := newFake(getPut)
			logs := &logRecords{}
			b, _ := fakeBackend(t, d, 1, Config{SlowCall: tc.slow, Logger: slogOf(logs)})
			_, err := b.Fetch(rowsView(1), nil)
			require.NoError(t, err)
			time.Sleep(6 * time.Second)
			synctest.Wait()
			assert.Equal(t, tc.want, logs.Count(slowMsg))
			time.Sleep(time.Hour)
			synctest.Wait()
			assert.Equal(t, tc.want, logs.Count(slowMsg))
			d.Ops()[0].finish(contract.Ended, contract.Ready)
		})
	}
}

func TestAnIdleBackendHoldsNoTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newFake(getPut)
		logs := &logRecords{}
		b, _ := fakeBackend(t, d, 1, Config{Logger: slogOf(logs)})
		armed := func() bool {
			b.mu.Lock()
			defer b.mu.Unlock()
			return b.slowArmed
		}
		_, err := b.Fetch(rowsView(1), nil) // A at 0 s
		require.NoError(t, err)
		assert.True(t, armed())
		time.Sleep(10 * time.Second)
		d.Ops()[0].finish(contract.Ended, contract.Ready)
		assert.False(t, armed(), "nothing in flight: the timer is stopped")

		time.Sleep(20 * time.Second)
		_, err = b.Publish(rowsView(1), nil) // B at 30 s
		require.NoError(t, err)
		time.Sleep(60*time.Second - time.Nanosecond)
		synctest.Wait()
		assert.Zero(t, logs.Count(slowMsg), "A's old deadline does not log B early")
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		assert.Equal(t, 1, logs.Count(slowMsg), "B at 90 s")
		d.Ops()[1].finish(contract.Ended, contract.Ready)
		assert.False(t, armed())
	})
}

// A call held as unprovable leaves the slow-call watch: it is counted in
// CallsUnprovable and warned about once, when it became unprovable.
func TestAnUnprovableCallIsNotLoggedAsSlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newFake(getPut)
		logs := &logRecords{}
		b, _ := fakeBackend(t, d, 1, Config{Logger: slogOf(logs)})
		_, err := b.Fetch(rowsView(1), nil)
		require.NoError(t, err)
		time.Sleep(30 * time.Second)
		d.Ops()[0].finish(contract.Unprovable, contract.Fault)
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Zero(t, logs.Count(slowMsg))
		assert.Equal(t, 1, logs.Count("kvshare/binding: driver cannot prove a call's access ended; its memory is kept until a reclaim gives it back"))
		assert.Zero(t, b.Stats().OldestCall)
	})
}

// Shutdown's labels come in submission order, then in region index order,
// numerically ("region 2" before "region 10").
func TestShutdownLabelsAreInOrder(t *testing.T) {
	d := newFake(getPut)
	b, _ := fakeBackend(t, d, 12, Config{})
	var want []string
	for i := range 12 {
		v := contract.View{Groups: []contract.Group{{Region: 11 - i, Slots: []int32{0}, Names: [][]byte{[]byte("n")}}}}
		_, err := submitTo(b, direction(i%2+1), v)
		require.NoError(t, err)
		want = append(want, fmt.Sprintf("attempt %d (%v)", i+1, direction(i%2+1)))
	}
	for i := range 12 {
		want = append(want, fmt.Sprintf("region %d", i))
	}
	for _, op := range slices.Backward(d.Ops()) {
		op.finish(contract.Unprovable, contract.Fault)
	}
	assert.Equal(t, want, b.Shutdown(context.Background()))
	assert.Equal(t, want[12:], b.Regions().Held())
}
