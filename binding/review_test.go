package binding

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// What a review of the wave-1 binding found, one test each. Every test
// here failed before its fix.

// slowHold's Release blocks until let is closed.
type slowHold struct {
	entered chan struct{}
	let     chan struct{}
	done    chan struct{}
}

func newSlowHold() *slowHold {
	return &slowHold{entered: make(chan struct{}), let: make(chan struct{}), done: make(chan struct{})}
}

func (h *slowHold) Release() {
	close(h.entered)
	<-h.let
	close(h.done)
}

// An empty answer from Shutdown means the hold's Release returned: while
// it runs (slow), Shutdown whose context ends reports "hold".
func TestShutdownReportsTheHoldUntilReleaseReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newFake(getPut)
		hold := newSlowHold()
		b := bindBackend(t, d, []contract.SlotRegion{fakeRegion(0, contract.Host)}, hold, "t", Config{})

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		labels := b.Shutdown(ctx)
		select {
		case <-hold.entered:
		default:
			t.Fatal("the retiring goroutine never released the hold")
		}
		assert.Equal(t, []string{"hold"}, labels, "the regions are unregistered, but Release has not returned")
		assert.Empty(t, b.Regions().Held())
		assert.False(t, b.Regions().Released())

		ctx2, cancel2 := context.WithTimeout(context.Background(), time.Second)
		defer cancel2()
		assert.Equal(t, []string{"hold"}, b.Shutdown(ctx2), "asked again, still under way")

		close(hold.let)
		assert.Nil(t, b.Shutdown(context.Background()), "empty once Release returned")
		select {
		case <-hold.done:
		default:
			t.Fatal("Shutdown answered empty before Release returned")
		}
		assert.True(t, b.Regions().Released())
	})
}

// A Put or Get that returns an operation together with an error wrapping
// ErrDriverRejected broke the protocol: the operation may run, so its
// call is held as unprovable, its rows stay lent and the hold is kept.
func TestAnOperationWithARefusalIsAViolation(t *testing.T) {
	for _, dir := range []direction{fetch, publish} {
		t.Run(dir.String(), func(t *testing.T) {
			d := newFake(getPut)
			var op *fakeOp
			d.enter = func(n int, dir direction, bt contract.RowBatch, onChange func()) (contract.Operation, error, bool) {
				op = &fakeOp{d: d, dir: dir, batch: bt, onChange: onChange}
				op.st.Rows = make([]contract.RowStatus, len(bt.Rows))
				return op, fmt.Errorf("%w: but here is an operation anyway", contract.ErrDriverRejected), true
			}
			b, hold := fakeBackend(t, d, 1, Config{})
			var a contract.Attempt
			var err error
			if dir == fetch {
				a, err = b.Fetch(rowsView(3), nil)
			} else {
				a, err = b.Publish(rowsView(3), nil)
			}
			require.NoError(t, err)
			out, ok := a.Outcome()
			require.True(t, ok)
			var v *ViolationError
			require.ErrorAs(t, out.Fault, &v)
			assert.Contains(t, v.Rule, "returned an operation and an error")
			assert.False(t, a.Quiesced(), "the operation may still touch the slots")
			st := b.Stats()
			assert.EqualValues(t, 3, st.RowsLent)
			assert.EqualValues(t, 1, st.CallsUnprovable)

			op.finish(contract.Ended, contract.Ready) // proves nothing any more
			assert.Equal(t, []string{"attempt 1 (" + dir.String() + ")", "region 0"}, b.Shutdown(context.Background()))
			assert.Zero(t, hold.Released())
			_, err = b.Fetch(rowsView(1), nil)
			assert.ErrorIs(t, err, contract.ErrSubmissionRejected)
		})
	}
}

// A Register or RegisterRegions that returns a non-zero handle together
// with an error left a registration that may be live, whatever the error
// wraps: the hold is kept, and Unbind revokes that handle first.
func TestAHandleWithAnErrorMayBeLive(t *testing.T) {
	refusal := fmt.Errorf("%w: the store says no, but kept the handle", contract.ErrDriverRejected)
	t.Run("one region at a time", func(t *testing.T) {
		d := newFake(getPut)
		d.failRegistration(2, func() (contract.Registration, error) { return 9, refusal })
		hold := &countingHold{log: d}
		_, err := Bind(d, []contract.SlotRegion{fakeRegion(0, contract.Host), fakeRegion(1, contract.Host)}, hold)
		var live *LiveRegistrationError
		require.ErrorAs(t, err, &live)
		assert.Equal(t, []string{"region 1"}, live.Held, "region 0 rolled back; region 1 may be live")
		assert.Zero(t, hold.Released())
		require.NoError(t, live.Unbind(context.Background()))
		assert.Equal(t, 1, hold.Released())
		assert.Contains(t, d.Events(), "unregister 9", "the handle given with the error was revoked")
	})
	t.Run("together", func(t *testing.T) {
		d := newFakeTogether(getPut)
		d.registerRegions = func([]contract.RegionSpec) (contract.Registration, error) { return 4, refusal }
		hold := &countingHold{log: d.fakeDriver}
		_, err := Bind(d, []contract.SlotRegion{fakeRegion(0, contract.Host), fakeRegion(1, contract.Host)}, hold)
		var live *LiveRegistrationError
		require.ErrorAs(t, err, &live)
		assert.Equal(t, []string{"region 0", "region 1"}, live.Held)
		require.NoError(t, live.Unbind(context.Background()))
		assert.Equal(t, 1, hold.Released())
		assert.Contains(t, d.Events(), "unregister-regions 4")
	})
	t.Run("a RegistrationError naming another handle", func(t *testing.T) {
		d := newFake(getPut)
		d.failRegistration(1, func() (contract.Registration, error) {
			return 5, &contract.RegistrationError{Registration: 6, Err: errors.New("half done")}
		})
		d.live[6] = fakeRegion(0, contract.Host) // the store did take handle 6
		hold := &countingHold{log: d}
		_, err := Bind(d, []contract.SlotRegion{fakeRegion(0, contract.Host)}, hold)
		var live *LiveRegistrationError
		require.ErrorAs(t, err, &live)
		assert.Equal(t, []string{"region 0"}, live.Held)
		require.NoError(t, live.Unbind(context.Background()))
		assert.Subset(t, d.Events(), []string{"unregister 5", "unregister 6"}, "both handles revoked")
		assert.Equal(t, 1, hold.Released())
	})
}

// A call that is inside the driver's Put or Get when its attempt stops
// is asked to Cancel as soon as its operation arrives. (Attempt.Cancel
// cannot come then: the submitter hands every call over before it gets
// the attempt back; a fetch fault and Shutdown can.)
func TestACallInsideTheDriverIsCancelledWhenItArrives(t *testing.T) {
	stops := []struct {
		name string
		dir  direction
		// stop runs while call 2 is inside Get/Put; a is the attempt and
		// first is the operation of call 1.
		stop func(t *testing.T, b *Backend, a func() contract.Attempt, first *fakeOp)
	}{
		{"a fetch fault", fetch, func(t *testing.T, b *Backend, _ func() contract.Attempt, first *fakeOp) {
			first.finish(contract.Ended, contract.Fault)
		}},
		{"Shutdown", publish, func(t *testing.T, b *Backend, _ func() contract.Attempt, _ *fakeOp) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			b.Shutdown(ctx)
		}},
	}
	for _, tc := range stops {
		t.Run(tc.name, func(t *testing.T) {
			d := newFake(getPut)
			var b *Backend
			var attempt contract.Attempt
			inside := make(chan struct{})
			d.enter = func(n int, dir direction, bt contract.RowBatch, onChange func()) (contract.Operation, error, bool) {
				if n == 2 {
					close(inside)
					// The attempt stops while this call is inside the driver.
					tc.stop(t, b, func() contract.Attempt { return attempt }, d.Ops()[0])
				}
				return nil, nil, false
			}
			b, _ = fakeBackend(t, d, 1, Config{MaxRowsPerCall: 2})
			var err error
			if tc.dir == fetch {
				attempt, err = b.Fetch(rowsView(4), nil)
			} else {
				attempt, err = b.Publish(rowsView(4), nil)
			}
			require.NoError(t, err)
			<-inside
			ops := d.Ops()
			require.Len(t, ops, 2, "call 2 entered the driver; nothing after it")
			// At least once: after Shutdown, its retirement may ask too,
			// when it finds the operation already arrived (Cancel is
			// advisory, and asking twice is allowed).
			assert.GreaterOrEqual(t, ops[1].Cancels(), 1, "the call that was inside the driver was asked to Cancel on arrival")
		})
	}
}

// A final row status that changes later is a violation, whether it turns
// Pending again or into another verdict, before or after the call's
// results were recorded.
func TestAFinalStatusThatChangesIsAViolation(t *testing.T) {
	cases := []struct {
		name    string
		first   []contract.RowStatus // with access Open
		access  contract.Access
		then    []contract.RowStatus
		access2 contract.Access
	}{
		{"ready then fault, after the results", []contract.RowStatus{contract.Ready, contract.Ready}, contract.Open,
			[]contract.RowStatus{contract.Ready, contract.Fault}, contract.Open},
		{"ready then fault, at access end", []contract.RowStatus{contract.Ready, contract.Ready}, contract.Open,
			[]contract.RowStatus{contract.Fault, contract.Ready}, contract.Ended},
		{"miss then ready, before the results", []contract.RowStatus{contract.Miss, contract.Pending}, contract.Open,
			[]contract.RowStatus{contract.Ready, contract.Ready}, contract.Ended},
		{"ready then pending", []contract.RowStatus{contract.Ready, contract.Pending}, contract.Open,
			[]contract.RowStatus{contract.Pending, contract.Ready}, contract.Open},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := newFake(getPut)
			b, hold := fakeBackend(t, d, 1, Config{})
			a, err := b.Fetch(rowsView(2), nil)
			require.NoError(t, err)
			op := d.Ops()[0]
			op.finish(tc.access, tc.first...)
			op.finish(tc.access2, tc.then...)
			v := b.Stats().Violation
			assert.Contains(t, v, "a final row status changed")
			out, ok := a.Outcome()
			require.True(t, ok)
			if !(contract.OpState{Rows: tc.first}).Settled() {
				var ve *ViolationError
				assert.ErrorAs(t, out.Fault, &ve, "the outcome was not known yet: the violation is its fault")
			}
			assert.False(t, a.Quiesced(), "held as unprovable")
			assert.Equal(t, []string{"attempt 1 (fetch)", "region 0"}, b.Shutdown(context.Background()))
			assert.Zero(t, hold.Released())
		})
	}
}

// A region with no slots is skipped by Bind (its other fields checked),
// keeps its index unserved, and makes Bind refuse only when nothing is
// left to serve.
func TestRegionsWithNoSlots(t *testing.T) {
	empty := fakeRegion(0, contract.Host)
	empty.SlotCount, empty.Len = 0, 0
	t.Run("skipped, index kept", func(t *testing.T) {
		for _, d := range []contract.Driver{newFake(getPut), newFakeTogether(getPut)} {
			hold := &countingHold{}
			r, err := Bind(d, []contract.SlotRegion{empty, fakeRegion(1, contract.Host)}, hold)
			require.NoError(t, err)
			assert.False(t, r.Served(0))
			assert.True(t, r.Served(1))
			assert.Equal(t, []string{"region 1"}, r.Held(), "only the region with slots was registered")
			b, err := New(r, Config{KeyPrefix: "t"})
			require.NoError(t, err)
			_, err = b.Fetch(contract.View{Groups: []contract.Group{{Region: 0, Slots: []int32{0}, Names: [][]byte{{1}}}}}, nil)
			var se *SubmissionError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, 0, se.Group)
			assert.Equal(t, -1, se.Row, "the fault is the group's region, not a row")
			assert.Contains(t, err.Error(), "region 0 has no slots")
			a, err := b.Fetch(contract.View{Groups: []contract.Group{{Region: 1, Slots: []int32{3}, Names: [][]byte{{1}}}}}, nil)
			require.NoError(t, err)
			a.Cancel()
			switch f := d.(type) {
			case *fakeDriver:
				f.Ops()[0].finish(contract.Ended, contract.Cancelled)
			case *fakeTogether:
				f.Ops()[0].finish(contract.Ended, contract.Cancelled)
			}
			assert.Nil(t, b.Shutdown(context.Background()))
			assert.Equal(t, 1, hold.Released())
		}
	})
	t.Run("nothing left to serve", func(t *testing.T) {
		d := newFake(getPut)
		hold := &countingHold{}
		_, err := Bind(d, []contract.SlotRegion{empty, empty}, hold)
		require.ErrorIs(t, err, contract.ErrConstructionRejected)
		assert.Contains(t, err.Error(), "regions with no slots: 2")
		assert.Equal(t, 1, hold.Released())
		assert.Empty(t, d.Events())
	})
	t.Run("other fields still checked", func(t *testing.T) {
		for field, edit := range map[string]func(*contract.SlotRegion){
			"Base":      func(r *contract.SlotRegion) { r.Base = 0 },
			"Kind":      func(r *contract.SlotRegion) { r.Kind = 0 },
			"SlotBytes": func(r *contract.SlotRegion) { r.SlotBytes = 0 },
			"Len":       func(r *contract.SlotRegion) { r.Len = -1 },
		} {
			bad := empty
			edit(&bad)
			d := newFake(getPut)
			hold := &countingHold{}
			_, err := Bind(d, []contract.SlotRegion{bad, fakeRegion(1, contract.Host)}, hold)
			require.ErrorIs(t, err, contract.ErrConstructionRejected, field)
			require.ErrorIs(t, err, contract.ErrInvalidRegion, field)
			assert.Contains(t, err.Error(), "region 0", field)
			assert.Contains(t, err.Error(), field)
			assert.Equal(t, 1, hold.Released(), field)
			assert.Empty(t, d.Events(), "nothing registered")
		}
	})
	t.Run("wrapping checked as Validate checks it", func(t *testing.T) {
		// Base+Len may reach the top of the address space, not pass it.
		for _, tc := range []struct {
			len   int64
			wraps bool
		}{{99, false}, {100, false}, {101, true}, {1 << 40, true}} {
			top := empty
			top.Base, top.Len = math.MaxUint64-100, tc.len
			withSlots := top
			withSlots.SlotCount, withSlots.SlotBytes = 1, 64
			require.Equal(t, tc.wraps, withSlots.Validate() != nil, "Len %d: Validate", tc.len)
			hold := &countingHold{}
			_, err := Bind(newFake(getPut), []contract.SlotRegion{top, fakeRegion(1, contract.Host)}, hold)
			if tc.wraps {
				require.ErrorIs(t, err, contract.ErrInvalidRegion, "Len %d", tc.len)
				assert.Contains(t, err.Error(), "wraps", "Len %d", tc.len)
				assert.Equal(t, 1, hold.Released(), "Len %d", tc.len)
			} else {
				require.NoError(t, err, "Len %d: skipped, like any region with no slots", tc.len)
			}
		}
	})
	t.Run("a negative slot count is still bad geometry", func(t *testing.T) {
		bad := empty
		bad.SlotCount = -1
		hold := &countingHold{}
		_, err := Bind(newFake(getPut), []contract.SlotRegion{bad, fakeRegion(1, contract.Host)}, hold)
		require.ErrorIs(t, err, contract.ErrInvalidRegion)
	})
}

// CallLimit tells a lease holder what one driver call may pin.
func TestCallLimit(t *testing.T) {
	capped := getPut
	capped.MaxRowsPerOp = 6
	regions := []contract.SlotRegion{fakeRegion(0, contract.Host), fakeRegion(1, contract.Device), fakeRegion(2, contract.Host)}
	regions[2].SlotBytes, regions[2].Len = 1000, 1000*16
	cases := []struct {
		name   string
		caps   contract.Capabilities
		cfg    Config
		region int
		rows   int
		bytes  int64
	}{
		{"no cap: the whole region", getPut, Config{}, 0, 16, 16 * 64},
		{"the backend's row cap", getPut, Config{MaxRowsPerCall: 4}, 0, 4, 4 * 64},
		{"the driver's row cap", capped, Config{MaxRowsPerCall: 10}, 0, 6, 6 * 64},
		{"the byte cap", getPut, Config{MaxBytesPerCall: 3500}, 2, 3, 3000},
		{"a byte cap below one slot", getPut, Config{MaxBytesPerCall: 10}, 2, 1, 1000},
		{"a cap above the slot count", getPut, Config{MaxRowsPerCall: 100}, 0, 16, 16 * 64},
		{"an unserved region", getPut, Config{}, 1, 0, 0},
		{"out of range", getPut, Config{}, 3, 0, 0},
		{"negative", getPut, Config{}, -1, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := bindBackend(t, newFake(tc.caps), regions, &countingHold{}, "t", tc.cfg)
			rows, bytes := b.CallLimit(tc.region)
			assert.Equal(t, tc.rows, rows)
			assert.Equal(t, tc.bytes, bytes)
		})
	}
}

// Stats splits the rows by direction; Rows is the sum.
func TestStatsSplitRowsByDirection(t *testing.T) {
	d := newFake(getPut)
	d.answerReadyBut(t, "n1", contract.Miss)
	b, _ := fakeBackend(t, d, 1, Config{})
	_, err := b.Publish(rowsView(3), nil)
	require.NoError(t, err)
	_, err = b.Fetch(rowsView(2), nil)
	require.NoError(t, err)
	s := b.Stats()
	assert.EqualValues(t, 2, s.PublishRows[contract.Ready])
	assert.EqualValues(t, 1, s.PublishRows[contract.Miss])
	assert.EqualValues(t, 1, s.FetchRows[contract.Ready])
	assert.EqualValues(t, 1, s.FetchRows[contract.Miss])
	for st := range s.Rows {
		assert.Equal(t, s.PublishRows[st]+s.FetchRows[st], s.Rows[st], "status %v", contract.RowStatus(st))
	}
}
