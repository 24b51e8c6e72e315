package binding

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// A violation of each kind, made by the second of three calls of a fetch
// or a publish. The first call is admitted and left running; the third
// never reaches the driver. In each rule, %s stands for the method, Get or
// Put.
func TestProtocolViolationsAreContained(t *testing.T) {
	onSecondCall := func(op contract.Operation, err error) func(*fakeDriver) {
		return func(d *fakeDriver) {
			d.enter = func(n int, _ direction, _ contract.RowBatch, _ func()) (contract.Operation, error, bool) {
				return op, err, n == 2
			}
		}
	}
	onSecondPoll := func(poll func(contract.OpState) contract.OpState) func(*fakeDriver) {
		return func(d *fakeDriver) {
			d.enter = func(n int, _ direction, b contract.RowBatch, onChange func()) (contract.Operation, error, bool) {
				if n != 2 {
					return nil, nil, false
				}
				op := &fakeOp{d: d, batch: b, onChange: onChange}
				op.st.Rows = make([]contract.RowStatus, len(b.Rows))
				op.poll = poll
				return op, nil, true
			}
		}
	}
	cases := []struct {
		name   string
		rule   string // %s: Get or Put
		break_ func(d *fakeDriver)
	}{
		{"the call panics", "%s panicked", func(d *fakeDriver) {
			d.enter = func(n int, _ direction, _ contract.RowBatch, _ func()) (contract.Operation, error, bool) {
				if n == 2 {
					panic("index out of range")
				}
				return nil, nil, false
			}
		}},
		{"an error not wrapping ErrDriverRejected", "%s returned an error that does not wrap ErrDriverRejected",
			onSecondCall(nil, errors.New("connection reset"))},
		{"a nil operation", "%s returned a nil operation and no error", onSecondCall(nil, nil)},
		{"Poll returns one result too few", "Poll returned the wrong number of results",
			onSecondPoll(func(st contract.OpState) contract.OpState { st.Rows = st.Rows[1:]; return st })},
		{"Poll returns one result too many", "Poll returned the wrong number of results",
			onSecondPoll(func(st contract.OpState) contract.OpState { st.Rows = append(st.Rows, contract.Ready); return st })},
		{"Poll panics", "Poll panicked", onSecondPoll(func(contract.OpState) contract.OpState { panic("nil map") })},
		{"Poll returns an unknown status", "Poll returned an unknown row status",
			onSecondPoll(func(st contract.OpState) contract.OpState { st.Rows[0] = 42; return st })},
		{"access ends before results", "access left Open before every row was final",
			onSecondPoll(func(st contract.OpState) contract.OpState { st.Access = contract.Ended; return st })},
		{"Poll returns an unknown access state", "Poll returned an unknown access state",
			onSecondPoll(func(st contract.OpState) contract.OpState { st.Access = 9; return st })},
	}
	for _, dir := range []direction{fetch, publish} {
		method := map[direction]string{fetch: "Get", publish: "Put"}[dir]
		for _, tc := range cases {
			rule := tc.rule
			if strings.Contains(rule, "%s") {
				rule = fmt.Sprintf(rule, method)
			}
			t.Run(dir.String()+"/"+tc.name, func(t *testing.T) {
				d := newFake(getPut)
				logs := &logRecords{}
				b, hold := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 2, Logger: slogOf(logs)})
				tc.break_(d)
				a, err := submitTo(b, dir, rowsView(6))
				require.NoError(t, err, "the attempt was accepted before the violation")
				assert.Equal(t, 2, d.Calls(), "no call after the violation reaches the driver")

				st := b.Stats()
				assert.Contains(t, st.Violation, rule)
				assert.EqualValues(t, 1, st.CallsUnprovable, "the call is held as unprovable")
				assert.EqualValues(t, 1, st.CallsInFlight, "the first call runs on")
				assert.EqualValues(t, 2, st.Rows[contract.Fault])
				assert.EqualValues(t, 2, st.Rows[contract.Cancelled], "the rows never handed over")
				assert.EqualValues(t, 4, st.RowsLent, "the running call and the unprovable one; the cancelled rows hold no memory")
				assert.EqualValues(t, 4*64, st.BytesLent)
				assert.Equal(t, 1, logs.Count("kvshare/binding: driver broke the protocol; the backend takes no more submissions"))
				assert.Equal(t, 1, logs.Count("kvshare/binding: call held as unprovable after a protocol violation; its memory is kept for good"))

				for _, later := range []direction{fetch, publish} {
					_, err = submitTo(b, later, rowsView(1))
					require.ErrorIs(t, err, contract.ErrSubmissionRejected)
					var v *ViolationError
					require.ErrorAs(t, err, &v, "the rejection names the violation")
					assert.Equal(t, rule, v.Rule)
					assert.Equal(t, "attempt 1 ("+dir.String()+") group 0 rows 2-3", v.Call)
				}
				assert.Equal(t, 2, d.Calls(), "nothing of a rejected submission reaches the driver")

				// the first call, already inside the driver, runs on
				d.Ops()[0].finish(contract.Ended, contract.Ready)
				out, ok := a.Outcome()
				require.True(t, ok)
				assert.Equal(t, []bool{true, true, false, false, false, false}, out.Delivered)
				var v *ViolationError
				require.ErrorAs(t, out.Fault, &v)
				assert.False(t, a.Quiesced(), "the broken call never proves its access ended")
				st = b.Stats()
				assert.EqualValues(t, 2, st.RowsLent, "only the unprovable call's rows stay lent")
				assert.EqualValues(t, 2*64, st.BytesLent)

				labels := b.Shutdown(context.Background())
				assert.Equal(t, []string{"attempt 1 (" + dir.String() + ")", "region 0"}, labels)
				assert.Zero(t, hold.Released())
				assert.Equal(t, 1, d.Live(), "never unregistered")
			})
		}
	}
}

// submitTo submits v as a fetch or a publish, without hint or destination.
func submitTo(b *Backend, dir direction, v contract.View) (contract.Attempt, error) {
	if dir == publish {
		return b.Publish(v, nil)
	}
	return b.Fetch(v, nil)
}

func TestAPanickingCancelIsAViolation(t *testing.T) {
	d := newFake(getPut)
	b, _ := fakeBackend(t, d, 1, Config{})
	a, err := b.Publish(rowsView(2), nil)
	require.NoError(t, err)
	op := d.Ops()[0]
	op.cancel = func() { panic("cancel of a closed channel") }
	a.Cancel()
	st := b.Stats()
	assert.Contains(t, st.Violation, "Cancel panicked")
	assert.EqualValues(t, 1, st.CallsUnprovable)
	out, ok := a.Outcome()
	require.True(t, ok)
	var v *ViolationError
	require.ErrorAs(t, out.Fault, &v)
	assert.False(t, a.Quiesced())
}

// A violation in one attempt cuts off another attempt in the middle of its
// handover: its next call never reaches the driver, and it takes the
// violation as its fault; its call already in the driver runs on.
func TestAViolationCutsOffAnotherAttemptsHandover(t *testing.T) {
	d := newFake(getPut)
	b, _ := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 1})
	first, err := b.Publish(rowsView(1), nil)
	require.NoError(t, err)
	victim := d.Ops()[0]
	victim.setPoll(func(contract.OpState) contract.OpState { panic("torn state") })

	d.enter = func(n int, _ direction, _ contract.RowBatch, _ func()) (contract.Operation, error, bool) {
		if n == 3 { // the second call of the fetch: the first attempt's driver callback fires meanwhile
			victim.onChange()
		}
		return nil, nil, false
	}
	second, err := b.Fetch(rowsView(4), nil)
	require.NoError(t, err)
	assert.Equal(t, 3, d.Calls(), "the fetch's third call was cut off")
	ops := d.Ops()
	require.Len(t, ops, 3)

	_, ok := second.Outcome()
	assert.False(t, ok, "its calls in the driver run on")
	ops[1].finish(contract.Ended, contract.Ready)
	ops[2].finish(contract.Ended, contract.Ready)
	out, ok := second.Outcome()
	require.True(t, ok)
	assert.Equal(t, []bool{true, true, false, false}, out.Delivered)
	var v *ViolationError
	require.ErrorAs(t, out.Fault, &v)
	assert.Equal(t, "Poll panicked", v.Rule)
	assert.ErrorContains(t, out.Fault, "group 0 row 2 never handed over")
	assert.True(t, second.Quiesced(), "nothing of it is unprovable")
	assert.False(t, first.Quiesced())
	assert.EqualValues(t, 2, b.Stats().Rows[contract.Cancelled])
}

// A violation in a call whose access end was already recorded holds
// nothing: the call is not unprovable, its attempt quiesces. The backend
// still takes no more submissions, and never drains, unregisters or
// releases the hold: the driver's answers prove nothing any more.
func TestAViolationAfterTheAccessEndedHoldsNoCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newFake(getPut)
		b, hold := fakeBackend(t, d, 1, Config{})
		a, err := b.Publish(rowsView(2), nil)
		require.NoError(t, err)
		op := d.Ops()[0]
		op.cancel = func() {
			op.finish(contract.Ended, contract.Ready) // recorded before the panic
			panic("cancel after close")
		}
		a.Cancel()

		st := b.Stats()
		assert.Contains(t, st.Violation, "Cancel panicked")
		assert.Zero(t, st.CallsUnprovable, "the access end was recorded first")
		assert.Zero(t, st.RowsLent)
		assert.Zero(t, st.BytesLent)
		assert.True(t, a.Quiesced())
		_, err = b.Fetch(rowsView(1), nil)
		require.ErrorIs(t, err, contract.ErrSubmissionRejected)

		before := len(d.Events())
		assert.Equal(t, []string{"region 0"}, b.Shutdown(context.Background()), "the hold can never be released")
		synctest.Wait()
		assert.Zero(t, hold.Released())
		assert.Equal(t, 1, d.Live())
		assert.Len(t, d.Events(), before, "neither drained nor unregistered")
	})
}

// A violation in a call whose results were already recorded still stops
// its attempt, and the outcome says why: without the fault, the rows
// never handed over would look like rows the store did not have.
func TestAViolationAfterTheResultsIsTheAttemptsFault(t *testing.T) {
	d := newFake(getPut)
	b, _ := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 2})
	d.enter = func(n int, _ direction, _ contract.RowBatch, _ func()) (contract.Operation, error, bool) {
		if n == 2 {
			first := d.Ops()[0]
			first.finish(contract.Open, contract.Ready) // results recorded, access open
			first.setPoll(func(contract.OpState) contract.OpState { panic("torn state") })
			first.onChange()
		}
		return nil, nil, false
	}
	a, err := b.Fetch(rowsView(6), nil)
	require.NoError(t, err)
	assert.Equal(t, 2, d.Calls(), "the third call never reached the driver")

	d.Ops()[1].finish(contract.Ended, contract.Ready)
	out, ok := a.Outcome()
	require.True(t, ok)
	assert.Equal(t, []bool{true, true, true, true, false, false}, out.Delivered, "recorded verdicts stand")
	var v *ViolationError
	require.ErrorAs(t, out.Fault, &v, "the outcome names the violation")
	assert.Equal(t, "Poll panicked", v.Rule)
	assert.False(t, a.Quiesced(), "the broken call's access never ends")
	st := b.Stats()
	assert.EqualValues(t, 1, st.CallsUnprovable)
	assert.EqualValues(t, 4, st.Rows[contract.Ready])
	assert.Zero(t, st.Rows[contract.Fault], "verdicts are recorded once")
	assert.EqualValues(t, 2, st.Rows[contract.Cancelled])
	assert.EqualValues(t, 2, st.RowsLent)
}

// A call that broke the protocol after its results were recorded stops
// its attempt from the row after it: a Fault among its own rows is
// earlier in view order, so it stays the outcome's fault.
func TestAViolationAfterTheResultsLeavesAnEarlierRowFault(t *testing.T) {
	d := newFake(getPut)
	b, _ := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 2})
	d.enter = func(n int, _ direction, _ contract.RowBatch, _ func()) (contract.Operation, error, bool) {
		if n == 2 {
			first := d.Ops()[0]
			first.finish(contract.Open, contract.Ready, contract.Fault) // results recorded, access open
			first.setPoll(func(contract.OpState) contract.OpState { panic("torn state") })
			first.onChange()
		}
		return nil, nil, false
	}
	a, err := b.Publish(rowsView(6), nil) // a Fault alone does not stop a publish
	require.NoError(t, err)
	assert.Equal(t, 2, d.Calls(), "the violation stopped the attempt: the third call never reached the driver")

	d.Ops()[1].finish(contract.Ended, contract.Ready)
	out, ok := a.Outcome()
	require.True(t, ok)
	assert.Equal(t, []bool{true, false, true, true, false, false}, out.Delivered)
	require.ErrorIs(t, out.Fault, ErrRowFault, "row 1's fault is earlier than the violation (row 2 on)")
	assert.ErrorContains(t, out.Fault, "group 0 row 1 ")
	assert.Contains(t, b.Stats().Violation, "Poll panicked")
}

// A violation after a call's results and a Fault in the next call's
// first row stop the attempt at the same row. The fault noted first
// stays: a later one at the same row explains nothing earlier.
func TestAFaultAtTheSameRowDoesNotReplaceTheFirst(t *testing.T) {
	for _, violationFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("violation first=%v", violationFirst), func(t *testing.T) {
			d := newFake(getPut)
			b, _ := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 2})
			a, err := b.Publish(rowsView(6), nil)
			require.NoError(t, err)
			ops := d.Ops()
			require.Len(t, ops, 3)
			violate := func() { // call 0: results recorded, then Poll breaks
				ops[0].finish(contract.Open, contract.Ready, contract.Ready)
				ops[0].setPoll(func(contract.OpState) contract.OpState { panic("torn state") })
				ops[0].onChange()
			}
			fault := func() { ops[1].finish(contract.Ended, contract.Fault, contract.Ready) } // row 2
			if violationFirst {
				violate()
				fault()
			} else {
				fault()
				violate()
			}
			_, known := a.Outcome()
			require.False(t, known, "call 2 is still running")
			ops[2].finish(contract.Ended, contract.Ready)
			out, ok := a.Outcome()
			require.True(t, ok)
			assert.Equal(t, []bool{true, true, false, true, true, true}, out.Delivered)
			var v *ViolationError
			if violationFirst {
				require.ErrorAs(t, out.Fault, &v)
				assert.Equal(t, "Poll panicked", v.Rule)
			} else {
				require.ErrorIs(t, out.Fault, ErrRowFault)
				assert.ErrorContains(t, out.Fault, "group 0 row 2 ")
				assert.False(t, errors.As(out.Fault, &v))
			}
		})
	}
}
