package binding

import (
	"context"
	"errors"
	"testing"

	"github.com/kvshare/kvshare/contract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A violation of each kind, made by the second of three calls of a fetch.
// The first call is admitted and left running; the third never reaches
// the driver.
func TestProtocolViolationsAreContained(t *testing.T) {
	type breaker func(t *testing.T, d *fakeDriver, a func() contract.Attempt)
	onSecondCall := func(op contract.Operation, err error) func(*testing.T, *fakeDriver, func() contract.Attempt) {
		return func(_ *testing.T, d *fakeDriver, _ func() contract.Attempt) {
			d.enter = func(n int, _ direction, _ contract.RowBatch, _ func()) (contract.Operation, error, bool) {
				return op, err, n == 2
			}
		}
	}
	onSecondPoll := func(poll func(contract.OpState) contract.OpState) breaker {
		return func(_ *testing.T, d *fakeDriver, _ func() contract.Attempt) {
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
		rule   string
		break_ breaker
	}{
		{"Get panics", "Get panicked", func(_ *testing.T, d *fakeDriver, _ func() contract.Attempt) {
			d.enter = func(n int, _ direction, _ contract.RowBatch, _ func()) (contract.Operation, error, bool) {
				if n == 2 {
					panic("index out of range")
				}
				return nil, nil, false
			}
		}},
		{"Get returns an error not wrapping ErrDriverRejected", "Get returned an error that does not wrap ErrDriverRejected",
			onSecondCall(nil, errors.New("connection reset"))},
		{"Get returns a nil operation", "Get returned a nil operation and no error", onSecondCall(nil, nil)},
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
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := newFake(getPut)
			logs := &logRecords{}
			b, hold := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 2, Logger: slogOf(logs)})
			tc.break_(t, d, nil)
			a, err := b.Fetch(rowsView(6), nil)
			require.NoError(t, err, "the attempt was accepted before the violation")
			assert.Equal(t, 2, d.Calls(), "no call after the violation reaches the driver")

			st := b.Stats()
			assert.Contains(t, st.Violation, tc.rule)
			assert.EqualValues(t, 1, st.CallsUnprovable, "the call is held as unprovable")
			assert.EqualValues(t, 2, st.Rows[contract.Fault])
			assert.EqualValues(t, 2, st.Rows[contract.Cancelled], "the rows never handed over hold no memory")
			assert.EqualValues(t, 4, st.RowsLent, "the running call and the unprovable one")
			assert.Equal(t, 1, logs.Count("kvshare/binding: driver broke the protocol; the backend takes no more submissions"))

			_, err = b.Fetch(rowsView(1), nil)
			require.ErrorIs(t, err, contract.ErrSubmissionRejected)
			var v *ViolationError
			require.ErrorAs(t, err, &v, "the rejection names the violation")
			assert.Equal(t, tc.rule, v.Rule)
			assert.Equal(t, "attempt 1 (fetch) group 0 rows 2-3", v.Call)
			_, err = b.Publish(rowsView(1), nil)
			require.ErrorIs(t, err, contract.ErrSubmissionRejected)

			// the first call, already inside the driver, runs on
			d.Ops()[0].finish(contract.Ended, contract.Ready)
			out, ok := a.Outcome()
			require.True(t, ok)
			assert.Equal(t, []bool{true, true, false, false, false, false}, out.Delivered)
			require.ErrorAs(t, out.Fault, &v)
			assert.False(t, a.Quiesced(), "the broken call never proves its access ended")

			labels := b.Shutdown(context.Background())
			assert.Equal(t, []string{"attempt 1 (fetch)", "region 0"}, labels)
			assert.Zero(t, hold.Released())
			assert.Equal(t, 1, d.Live())
		})
	}
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
