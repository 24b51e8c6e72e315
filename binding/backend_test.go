package binding

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// callSizes returns the row count of each operation admitted.
func callSizes(d *fakeDriver) []int {
	var n []int
	for _, op := range d.Ops() {
		n = append(n, len(op.rows))
	}
	return n
}

func TestNewRefusesABadConfig(t *testing.T) {
	d := newFake(getPut)
	r, err := Bind(d, []contract.SlotRegion{fakeRegion(0, contract.Host)}, &countingHold{})
	require.NoError(t, err)
	for name, cfg := range map[string]Config{
		"a prefix keys refuses":  {KeyPrefix: "a b"},
		"negative rows per call": {KeyPrefix: "p", MaxRowsPerCall: -1},
		"negative bytes":         {KeyPrefix: "p", MaxBytesPerCall: -1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(r, cfg)
			require.ErrorIs(t, err, ErrConfig)
		})
	}
	_, err = New(nil, Config{KeyPrefix: "p"})
	require.ErrorIs(t, err, ErrConfig)
	b, err := New(r, Config{KeyPrefix: "p"})
	require.NoError(t, err)
	assert.Same(t, r, b.Regions())
	_, err = New(r, Config{KeyPrefix: "p"})
	require.ErrorIs(t, err, ErrConfig, "a binding belongs to one backend")
}

func TestCallsAreCutByCapsAndRepeatedKeys(t *testing.T) {
	view := rowsView(8)
	repeated := rowsView(6)
	repeated.Groups[0].Names[3] = repeated.Groups[0].Names[1] // n1 again at slot 3
	twoGroups := rowsView(3)
	twoGroups.Groups = append(twoGroups.Groups, contract.Group{Region: 1, Slots: []int32{0, 1}, Names: [][]byte{[]byte("a"), []byte("b")}})
	cases := []struct {
		name      string
		driverCap int
		cfg       Config
		view      contract.View
		want      []int
	}{
		{"no caps: one call", 0, Config{}, view, []int{8}},
		{"driver cap", 3, Config{}, view, []int{3, 3, 2}},
		{"own row cap tighter", 3, Config{MaxRowsPerCall: 2}, view, []int{2, 2, 2, 2}},
		{"driver cap tighter", 3, Config{MaxRowsPerCall: 5}, view, []int{3, 3, 2}},
		{"byte cap", 0, Config{MaxBytesPerCall: 3 * 64}, view, []int{3, 3, 2}},
		{"byte cap below one row", 0, Config{MaxBytesPerCall: 10}, rowsView(2), []int{1, 1}},
		{"repeated key starts a call", 0, Config{}, repeated, []int{3, 3}},
		{"one group per call", 0, Config{}, twoGroups, []int{3, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			caps := getPut
			caps.MaxRowsPerOp = tc.driverCap
			d := newFake(caps)
			d.answer = func(direction, string) contract.RowStatus { return contract.Ready }
			b, _ := fakeBackend(t, d, 2, tc.cfg)
			a, err := b.Publish(tc.view, nil)
			require.NoError(t, err)
			assert.Equal(t, tc.want, callSizes(d))
			out, ok := a.Outcome()
			require.True(t, ok)
			assert.Equal(t, tc.view.Rows(), out.Prefix())
		})
	}
}

func TestRowsCarryNamesAndSlotSpans(t *testing.T) {
	d := newFake(getPut)
	b, _ := fakeBackend(t, d, 2, Config{})
	v := contract.View{Groups: []contract.Group{{Region: 1, Slots: []int32{5, 2}, Names: [][]byte{{0xab}, []byte("x")}}}}
	_, err := b.Fetch(v, nil)
	require.NoError(t, err)
	ops := d.Ops()
	require.Len(t, ops, 1)
	reg, _ := b.Regions().Region(1)
	assert.Equal(t, []contract.Row{
		{Name: []byte{0xab}, Spans: []contract.Span{{Addr: reg.Base + 5*64, Len: 64}}},
		{Name: []byte("x"), Spans: []contract.Span{{Addr: reg.Base + 2*64, Len: 64}}},
	}, ops[0].rows)
	assert.Equal(t, []string{keyOf(t, "\xab"), keyOf(t, "x")}, ops[0].Keys(), "the batch's key maker is the backend's stem")
	assert.Equal(t, fetch, ops[0].dir)
}

func TestADriverThatAnswersInsidePutCompletesTheAttempt(t *testing.T) {
	d := newFake(getPut)
	d.answer = func(direction, string) contract.RowStatus { return contract.Ready }
	var wakes atomic.Int32
	b, _ := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 2, Wake: func() { wakes.Add(1) }})
	a, err := b.Publish(rowsView(5), nil)
	require.NoError(t, err)
	out, ok := a.Outcome()
	require.True(t, ok, "onChange came inside Put, before the operation was known; the backend still learnt of it")
	assert.Equal(t, 5, out.Prefix())
	assert.NoError(t, out.Fault)
	assert.True(t, a.Quiesced())
	select {
	case <-a.Done():
	default:
		t.Fatal("Done not closed at quiescence")
	}
	assert.Positive(t, wakes.Load())
	st := b.Stats()
	assert.EqualValues(t, 1, st.Attempts)
	assert.EqualValues(t, 0, st.AttemptsOpen)
	assert.EqualValues(t, 5, st.Rows[contract.Ready])
	assert.Zero(t, st.CallsInFlight)
	assert.Zero(t, st.RowsLent)
	assert.Zero(t, st.BytesLent)
}

func TestOutcomeThenQuiescence(t *testing.T) {
	d := newFake(getPut)
	var wakes atomic.Int32
	b, _ := fakeBackend(t, d, 1, Config{Wake: func() { wakes.Add(1) }})
	a, err := b.Fetch(rowsView(3), nil)
	require.NoError(t, err)
	_, ok := a.Outcome()
	assert.False(t, ok)
	st := b.Stats()
	assert.EqualValues(t, 1, st.CallsInFlight)
	assert.EqualValues(t, 3, st.RowsLent)
	assert.EqualValues(t, 3*64, st.BytesLent)

	op := d.Ops()[0]
	op.finish(contract.Open, contract.Ready, contract.Miss, contract.Ready)
	out, ok := a.Outcome()
	require.True(t, ok, "results are known")
	assert.Equal(t, []bool{true, false, true}, out.Delivered)
	assert.Equal(t, 1, out.Prefix())
	assert.NoError(t, out.Fault, "a miss is no fault")
	assert.False(t, a.Quiesced(), "the store may still touch the slots")
	assert.EqualValues(t, 1, wakes.Load())
	assert.EqualValues(t, 3, b.Stats().RowsLent)

	op.finish(contract.Ended)
	assert.True(t, a.Quiesced())
	<-a.Done()
	assert.EqualValues(t, 2, wakes.Load())
	st = b.Stats()
	assert.Zero(t, st.RowsLent)
	assert.EqualValues(t, 2, st.Rows[contract.Ready])
	assert.EqualValues(t, 1, st.Rows[contract.Miss])
}

func TestWakeIsCalledOutsideTheLock(t *testing.T) {
	d := newFake(getPut)
	var b *Backend
	var seen atomic.Int64
	wake := func() { seen.Store(b.Stats().Attempts) } // would deadlock under the lock
	b, _ = fakeBackend(t, d, 1, Config{Wake: wake})
	_, err := b.Fetch(rowsView(1), nil)
	require.NoError(t, err)
	d.Ops()[0].finish(contract.Ended, contract.Ready)
	assert.EqualValues(t, 1, seen.Load())
}

func TestAMissDoesNotStopAFetch(t *testing.T) {
	d := newFake(getPut)
	d.answerReadyBut(t, "n1", contract.Miss)
	b, _ := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 2})
	a, err := b.Fetch(rowsView(6), nil)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2, 2}, callSizes(d), "every call was handed over")
	out, _ := a.Outcome()
	assert.Equal(t, []bool{true, false, true, true, true, true}, out.Delivered)
	assert.Equal(t, 1, out.Prefix())
	assert.NoError(t, out.Fault)
}

func TestNotReadyAndDeclinedAreUndeliveredWithoutFault(t *testing.T) {
	for _, s := range []contract.RowStatus{contract.NotReady, contract.Declined, contract.Cancelled} {
		t.Run(s.String(), func(t *testing.T) {
			d := newFake(getPut)
			b, _ := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 1})
			a, err := b.Publish(rowsView(3), nil)
			require.NoError(t, err)
			ops := d.Ops()
			require.Len(t, ops, 3)
			ops[0].finish(contract.Ended, contract.Ready)
			ops[1].finish(contract.Ended, s)
			ops[2].finish(contract.Ended, contract.Ready)
			out, ok := a.Outcome()
			require.True(t, ok)
			assert.Equal(t, []bool{true, false, true}, out.Delivered)
			assert.NoError(t, out.Fault)
			assert.EqualValues(t, 1, b.Stats().Rows[s])
		})
	}
}

func TestAFaultStopsLaterFetchCallsNotYetHandedOver(t *testing.T) {
	d := newFake(getPut)
	d.answerReadyBut(t, "n4", contract.Fault)
	b, _ := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 2})
	a, err := b.Fetch(rowsView(8), nil)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2, 2}, callSizes(d), "the call after the fault never reached the driver")
	out, ok := a.Outcome()
	require.True(t, ok)
	assert.Equal(t, []bool{true, true, true, true, false, true, false, false}, out.Delivered)
	assert.Equal(t, 4, out.Prefix())
	require.ErrorIs(t, out.Fault, ErrRowFault)
	assert.ErrorContains(t, out.Fault, "group 0 row 4")
	assert.True(t, a.Quiesced())
	st := b.Stats()
	assert.EqualValues(t, 2, st.Rows[contract.Cancelled], "rows never handed over end Cancelled")
	assert.EqualValues(t, 1, st.Rows[contract.Fault])
	assert.EqualValues(t, 5, st.Rows[contract.Ready])
}

func TestAFetchFaultCancelsLaterCallsAndWaitsForEarlierOnes(t *testing.T) {
	d := newFake(getPut)
	b, _ := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 2})
	a, err := b.Fetch(rowsView(6), nil)
	require.NoError(t, err)
	ops := d.Ops()
	require.Len(t, ops, 3)

	ops[1].finish(contract.Ended, contract.Ready, contract.Fault) // the middle call fails first
	_, ok := a.Outcome()
	assert.False(t, ok, "the outcome waits for the call started before")
	assert.Zero(t, ops[0].Cancels(), "an earlier call is never cancelled")
	assert.Equal(t, 1, ops[2].Cancels(), "a later call is asked to stop")

	ops[2].finish(contract.Ended, contract.Cancelled)
	_, ok = a.Outcome()
	assert.False(t, ok)
	ops[0].finish(contract.Ended, contract.Ready)
	out, ok := a.Outcome()
	require.True(t, ok)
	assert.Equal(t, 3, out.Prefix(), "the earlier prefix is not lost")
	assert.ErrorContains(t, out.Fault, "group 0 row 3")
	assert.True(t, a.Quiesced())
}

// The outcome's fault is that of the earliest faulted row in view order,
// whichever call reports first, and whichever row of a call it is — the
// first row of the view included.
func TestTheEarliestFaultNamesTheOutcome(t *testing.T) {
	cases := []struct {
		name  string
		early []contract.RowStatus // rows 0 and 1; rows 2 and 3 both Fault
		row   int
	}{
		{"second row", []contract.RowStatus{contract.Ready, contract.Fault}, 1},
		{"first row", []contract.RowStatus{contract.Fault, contract.Ready}, 0},
		{"both rows", []contract.RowStatus{contract.Fault, contract.Fault}, 0},
	}
	for _, tc := range cases {
		for _, dir := range []direction{fetch, publish} {
			for _, laterFirst := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/%v/later call reports first=%v", tc.name, dir, laterFirst), func(t *testing.T) {
					d := newFake(getPut)
					b, _ := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 2})
					a, err := submitTo(b, dir, rowsView(4))
					require.NoError(t, err)
					ops := d.Ops()
					require.Len(t, ops, 2)
					early := func() { ops[0].finish(contract.Ended, tc.early...) }
					late := func() { ops[1].finish(contract.Ended, contract.Fault) }
					if laterFirst {
						late()
						early()
					} else {
						early()
						late()
					}
					out, ok := a.Outcome()
					require.True(t, ok)
					require.ErrorIs(t, out.Fault, ErrRowFault)
					assert.ErrorContains(t, out.Fault, fmt.Sprintf("group 0 row %d ", tc.row))
				})
			}
		}
	}
}

func TestPublishRowsStandAlone(t *testing.T) {
	d := newFake(getPut)
	d.answerReadyBut(t, "n1", contract.Fault)
	b, _ := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 2})
	a, err := b.Publish(rowsView(6), nil)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2, 2}, callSizes(d), "a faulted row does not stop a publish")
	out, _ := a.Outcome()
	assert.Equal(t, []bool{true, false, true, true, true, true}, out.Delivered)
	require.ErrorIs(t, out.Fault, ErrRowFault, "the fault is still reported")
}

func TestARejectedCallFaultsItsRowsAndStopsTheAttempt(t *testing.T) {
	for _, dir := range []direction{fetch, publish} {
		t.Run(dir.String(), func(t *testing.T) {
			d := newFake(getPut)
			rejection := fmt.Errorf("%w: draining", contract.ErrDriverRejected)
			d.enter = func(n int, _ direction, _ contract.RowBatch, _ func()) (contract.Operation, error, bool) {
				return nil, rejection, n == 2
			}
			b, hold := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 2})
			a, err := submitTo(b, dir, rowsView(6))
			require.NoError(t, err)
			assert.Equal(t, 2, d.Calls(), "nothing after the refused call")
			d.Ops()[0].finish(contract.Ended, contract.Ready)
			out, ok := a.Outcome()
			require.True(t, ok)
			assert.Equal(t, []bool{true, true, false, false, false, false}, out.Delivered)
			require.ErrorIs(t, out.Fault, contract.ErrDriverRejected)
			assert.ErrorContains(t, out.Fault, "group 0 rows 2-3")
			assert.True(t, a.Quiesced(), "a refused call's access counts as ended")
			st := b.Stats()
			assert.EqualValues(t, 2, st.Rows[contract.Fault])
			assert.EqualValues(t, 2, st.Rows[contract.Cancelled])
			assert.Zero(t, st.RowsLent)
			assert.Empty(t, st.Violation)
			assert.Nil(t, b.Shutdown(context.Background()))
			assert.Equal(t, 1, hold.Released())
		})
	}
}

func TestCancelAsksTheDriverAndMakesNoFault(t *testing.T) {
	d := newFake(getPut)
	d.cancelEnds = true
	b, _ := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 2})
	a, err := b.Fetch(rowsView(4), nil)
	require.NoError(t, err)
	ops := d.Ops()
	ops[0].finish(contract.Ended, contract.Ready)
	a.Cancel()
	a.Cancel()
	assert.Zero(t, ops[0].Cancels(), "a call with its results is not asked")
	assert.Equal(t, 1, ops[1].Cancels())
	out, ok := a.Outcome()
	require.True(t, ok)
	assert.Equal(t, 2, out.Prefix())
	assert.NoError(t, out.Fault)
	assert.True(t, a.Quiesced())
	assert.EqualValues(t, 2, b.Stats().Rows[contract.Cancelled])
}

func TestResultsAreRecordedOnceWhateverTheCallbacks(t *testing.T) {
	d := newFake(getPut)
	b, _ := fakeBackend(t, d, 1, Config{})
	a, err := b.Fetch(rowsView(4), nil)
	require.NoError(t, err)
	op := d.Ops()[0]
	op.mu.Lock()
	for i := range op.st.Rows {
		op.st.Rows[i] = contract.Ready
	}
	op.st.Access = contract.Ended
	op.mu.Unlock()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(op.onChange)
	}
	wg.Wait()
	<-a.Done()
	st := b.Stats()
	assert.EqualValues(t, 4, st.Rows[contract.Ready])
	assert.Zero(t, st.RowsLent)

	// a driver that changes a final result afterwards changes nothing
	op.finish(contract.Ended, contract.Fault)
	out, _ := a.Outcome()
	assert.Equal(t, 4, out.Prefix())
	assert.EqualValues(t, 4, b.Stats().Rows[contract.Ready])
	assert.Zero(t, b.Stats().Rows[contract.Fault])

	// and once the access end is recorded, the operation is never asked again
	op.setPoll(func(contract.OpState) contract.OpState { panic("operation released") })
	op.onChange()
	assert.Empty(t, b.Stats().Violation)
}

func TestAHintReachesEveryGet(t *testing.T) {
	caps := getPut
	caps.Hints = true
	d := newFake(caps)
	b, _ := fakeBackend(t, d, 1, Config{MaxRowsPerCall: 1})
	hint := &struct{ pool string }{"hot"}
	_, err := b.Fetch(rowsView(3), hint)
	require.NoError(t, err)
	for _, op := range d.Ops() {
		assert.Same(t, hint, op.hint)
	}
}

func TestAnEmptyViewCompletesAtOnce(t *testing.T) {
	d := newFake(getPut)
	b, _ := fakeBackend(t, d, 1, Config{})
	a, err := b.Fetch(contract.View{}, nil)
	require.NoError(t, err)
	out, ok := a.Outcome()
	require.True(t, ok)
	assert.Empty(t, out.Delivered)
	assert.True(t, a.Quiesced())
	assert.Zero(t, d.Calls())
}

func TestUnprovableAccessKeepsEverything(t *testing.T) {
	d := newFake(getPut)
	logs := &logRecords{}
	b, hold := fakeBackend(t, d, 2, Config{MaxRowsPerCall: 2, Logger: slogOf(logs)})
	a, err := b.Fetch(rowsView(4), nil)
	require.NoError(t, err)
	ops := d.Ops()
	ops[0].finish(contract.Ended, contract.Ready)
	ops[1].finish(contract.Unprovable, contract.Fault)
	out, ok := a.Outcome()
	require.True(t, ok)
	assert.Equal(t, 2, out.Prefix())
	assert.False(t, a.Quiesced())

	ops[1].finish(contract.Ended) // Unprovable is terminal whatever the driver says later
	assert.False(t, a.Quiesced())
	ops[1].setPoll(func(contract.OpState) contract.OpState { panic("operation released") })
	ops[1].onChange()
	assert.Empty(t, b.Stats().Violation, "an unprovable call is polled only until its results are recorded")
	st := b.Stats()
	assert.EqualValues(t, 1, st.CallsUnprovable)
	assert.Zero(t, st.CallsInFlight)
	assert.EqualValues(t, 2, st.RowsLent, "its slots are kept")
	assert.EqualValues(t, 128, st.BytesLent)
	assert.Equal(t, 1, logs.Count("kvshare/binding: driver cannot prove a call's access ended; its memory is kept until a reclaim gives it back"))

	labels := b.Shutdown(context.Background()) // returns at once: nothing can change
	assert.Equal(t, []string{"attempt 1 (fetch)", "region 0", "region 1"}, labels)
	assert.Zero(t, hold.Released())
	for _, e := range d.Events() {
		assert.NotContains(t, e, "unregister", "a region with an unprovable call is never unregistered")
		assert.NotContains(t, e, "drain")
	}
	select {
	case <-b.Closed():
		t.Fatal("Closed while memory may be touched")
	default:
	}
	assert.Equal(t, 2, d.Live())
}

func TestACallCountsAsStartedBeforeItEntersTheDriver(t *testing.T) {
	d := newFake(getPut)
	var b *Backend
	var seen []contract.Stats
	d.enter = func(int, direction, contract.RowBatch, func()) (contract.Operation, error, bool) {
		seen = append(seen, b.Stats())
		return nil, nil, false
	}
	b, _ = fakeBackend(t, d, 1, Config{MaxRowsPerCall: 2})
	_, err := b.Fetch(rowsView(3), nil)
	require.NoError(t, err)
	require.Len(t, seen, 2)
	assert.EqualValues(t, 1, seen[0].CallsInFlight, "counted before Get was called")
	assert.EqualValues(t, 2, seen[0].RowsLent)
	assert.EqualValues(t, 2, seen[1].CallsInFlight)
	assert.EqualValues(t, 3, seen[1].RowsLent)
}

// The backend keeps the caller's arrays, as the contract says: it copies
// neither the slots nor the names of a view.
func TestTheViewIsReferencedNotCopied(t *testing.T) {
	d := newFake(getPut)
	b, _ := fakeBackend(t, d, 1, Config{})
	v := rowsView(3)
	a, err := b.Fetch(v, nil)
	require.NoError(t, err)
	kept := a.(*attempt).view
	require.Len(t, kept.Groups, 1)
	assert.Same(t, &v.Groups[0], &kept.Groups[0])
	assert.Same(t, &v.Groups[0].Slots[0], &kept.Groups[0].Slots[0])
	assert.Same(t, &v.Groups[0].Names[0], &kept.Groups[0].Names[0])
}
