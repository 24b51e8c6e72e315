package binding

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/broken"
)

// brokenCase is one broken driver under a backend: a lender with one
// region of 16 slots, a backend with prefix "mem", and the store.
type brokenCase struct {
	store *memdrv.Store
	d     *broken.Driver
	l     *lender
	b     *Backend
}

func (c *brokenCase) seed(t *testing.T, name string, size int) []byte {
	obj := bytes.Repeat([]byte{0x5a}, size)
	c.store.Set(memKey(t, c.b, name), obj)
	return obj
}

func (c *brokenCase) fetch(t *testing.T, rows int) contract.Attempt {
	a, err := c.b.Fetch(rowsView(rows), nil)
	require.NoError(t, err)
	return a
}

// heldForGood checks what the binding does with a call it can never prove
// ended: the attempt never quiesces, Shutdown answers at once with its
// label and the region, and the hold is kept.
func (c *brokenCase) heldForGood(t *testing.T, a contract.Attempt) {
	t.Helper()
	assert.False(t, a.Quiesced())
	assert.EqualValues(t, 1, c.b.Stats().CallsUnprovable)
	assert.Equal(t, []string{"attempt 1 (" + a.(*attempt).dir.String() + ")", "region 0"}, c.b.Shutdown(context.Background()))
	synctest.Wait()
	assert.Zero(t, c.l.Released())
	assert.Len(t, c.d.Inner().Regions(), 1)
}

// violated checks a contained protocol violation.
func (c *brokenCase) violated(t *testing.T, a contract.Attempt, rule string) {
	t.Helper()
	st := c.b.Stats()
	assert.Contains(t, st.Violation, rule)
	_, err := c.b.Publish(rowsView(1), nil)
	require.ErrorIs(t, err, contract.ErrSubmissionRejected)
	var v *ViolationError
	require.ErrorAs(t, err, &v)
	assert.Equal(t, rule, v.Rule)
	c.heldForGood(t, a)
}

// cleanShutdown checks that the binding let go of everything.
func (c *brokenCase) cleanShutdown(t *testing.T) {
	t.Helper()
	assert.Nil(t, c.b.Shutdown(context.Background()))
	assert.Equal(t, 1, c.l.Released())
	assert.Empty(t, c.d.Inner().Regions())
	require.NoError(t, c.d.Close())
}

// heldUntilReleased holds a get at the store, shuts down, and checks that
// the binding keeps the hold (never asking the lying method) until the
// row is released.
func (c *brokenCase) heldUntilReleased(t *testing.T) {
	c.seed(t, "n0", lenderSlotBytes)
	gate := c.d.Inner().Hold(memdrv.GetDir)
	a := c.fetch(t, 1)
	require.NoError(t, gate.Held(context.Background()))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	assert.Equal(t, []string{"attempt 1 (fetch)", "region 0"}, c.b.Shutdown(ctx))
	assert.Zero(t, c.l.Released())
	assert.Len(t, c.d.Inner().Regions(), 1, "never unregistered while busy")
	gate.Release()
	<-a.Done()
	<-c.b.Closed()
	c.cleanShutdown(t)
}

func TestBrokenDriversAreContained(t *testing.T) {
	scenarios := map[broken.Rule]func(t *testing.T, c *brokenCase){
		broken.WrongResultCount: func(t *testing.T, c *brokenCase) {
			c.seed(t, "n0", lenderSlotBytes)
			a := c.fetch(t, 1)
			c.violated(t, a, "Poll returned the wrong number of results")
		},
		broken.OnChangeAfterDrain: func(t *testing.T, c *brokenCase) {
			a, err := c.b.Publish(rowsView(2), nil)
			require.NoError(t, err)
			<-a.Done()
			c.cleanShutdown(t) // the late callbacks find nothing to record
			assert.EqualValues(t, 2, c.b.Stats().Rows[contract.Ready])
		},
		broken.AccessEndsBeforeResults: func(t *testing.T, c *brokenCase) {
			c.seed(t, "n0", lenderSlotBytes)
			resume := c.d.Inner().Pause()
			a := c.fetch(t, 1)
			resume()
			synctest.Wait()
			c.violated(t, a, "access left Open before every row was final")
		},
		broken.ResultsChangeAfterFinal: func(t *testing.T, c *brokenCase) {
			c.seed(t, "n0", lenderSlotBytes)
			a := c.fetch(t, 1)
			<-a.Done()
			out, _ := a.Outcome()
			assert.Equal(t, 1, out.Prefix(), "results are recorded once; later reads are never asked for")
			assert.Empty(t, c.b.Stats().Violation)
			c.cleanShutdown(t)
		},
		broken.UnregisterWhileBusy: func(t *testing.T, c *brokenCase) { c.heldUntilReleased(t) },
		broken.DrainTrueWhileLive:  func(t *testing.T, c *brokenCase) { c.heldUntilReleased(t) },
		broken.UnwrappedError: func(t *testing.T, c *brokenCase) {
			require.True(t, c.d.Inner().Drain(context.Background()))
			a := c.fetch(t, 1)
			c.violated(t, a, "Get returned an error that does not wrap ErrDriverRejected")
		},
		broken.WritesOutsideSpan: func(t *testing.T, c *brokenCase) {
			// The binding trusts verdicts; the conformance suite is what
			// catches a driver writing outside its spans.
			c.seed(t, "n0", lenderSlotBytes)
			before := bytes.Clone(c.l.mems[0].Slot(1))
			a := c.fetch(t, 1)
			<-a.Done()
			out, _ := a.Outcome()
			assert.Equal(t, 1, out.Prefix())
			assert.NotEqual(t, before, c.l.mems[0].Slot(1), "the neighbour slot was hit")
			c.cleanShutdown(t)
		},
		broken.LongObjectSpills: func(t *testing.T, c *brokenCase) {
			c.seed(t, "n0", 2*lenderSlotBytes)
			a := c.fetch(t, 1)
			<-a.Done()
			out, _ := a.Outcome()
			require.ErrorIs(t, out.Fault, ErrRowFault)
			assert.Equal(t, 0, out.Prefix())
			c.cleanShutdown(t)
		},
		broken.ShortObjectReady: func(t *testing.T, c *brokenCase) {
			c.seed(t, "n0", lenderSlotBytes/2)
			a := c.fetch(t, 1)
			<-a.Done()
			out, _ := a.Outcome()
			assert.Equal(t, 1, out.Prefix(), "the binding reports the verdict it was given")
			c.cleanShutdown(t)
		},
		broken.ReadyForAbsent: func(t *testing.T, c *brokenCase) {
			a := c.fetch(t, 1)
			<-a.Done()
			out, _ := a.Outcome()
			assert.Equal(t, 1, out.Prefix(), "the binding reports the verdict it was given")
			c.cleanShutdown(t)
		},
		broken.IgnoresCancel: func(t *testing.T, c *brokenCase) {
			resume := c.d.Inner().Pause()
			a, err := c.b.Publish(rowsView(2), nil)
			require.NoError(t, err)
			a.Cancel()
			resume()
			<-a.Done() // quiescence waited for the rows that ran anyway
			out, _ := a.Outcome()
			assert.Equal(t, 2, out.Prefix())
			c.cleanShutdown(t)
		},
		broken.UnprovableNotTerminal: func(t *testing.T, c *brokenCase) {
			c.seed(t, "n0", lenderSlotBytes)
			c.d.Inner().UnprovableGets(memKey(t, c.b, "n0"))
			a := c.fetch(t, 1)
			synctest.Wait()
			out, ok := a.Outcome()
			require.True(t, ok)
			require.ErrorIs(t, out.Fault, ErrRowFault)
			assert.Empty(t, c.b.Stats().Violation)
			c.heldForGood(t, a)
		},
		broken.PanicsInPut: func(t *testing.T, c *brokenCase) {
			a, err := c.b.Publish(rowsView(1), nil)
			require.NoError(t, err)
			c.violated(t, a, "Put panicked")
		},
		broken.NilOperation: func(t *testing.T, c *brokenCase) {
			a := c.fetch(t, 1)
			c.violated(t, a, "Get returned a nil operation and no error")
		},
		// NoOnChange has a test of its own below: its attempt stays open
		// for good without being unprovable, which a bubble cannot end.
		broken.NoOnChange: nil,

		// The rules added for the conformance suite break promises the
		// backend cannot see from its side of the boundary (memory
		// touched after access ended, a Drain or Close that lies, rows
		// answered in another order, a put of a key being written
		// answered Ready, a callback under a lock or after a true Drain,
		// device memory refused): their proof is the conformance suite,
		// whose self-test pairs each with the check that catches it.
		broken.GetWritesAfterEnd:           nil,
		broken.PutRereadsAfterEnd:          nil,
		broken.CancelEndsRunningRow:        nil,
		broken.UnregisterIgnoresQueued:     nil,
		broken.DrainIgnoresCallbacks:       nil,
		broken.DrainTrueWhenDeadline:       nil,
		broken.DrainTrueUnprovableWithTime: nil,
		broken.AdmitsAfterFalseDrain:       nil,
		broken.CloseAfterFalseDrain:        nil,
		broken.RowsReversed:                nil,
		broken.SecondPutReady:              nil,
		broken.LateOnChangeAfterDrain:      nil,
		broken.DrainCallbackUnderLock:      nil,
		broken.DeviceRefused:               nil,
		// So do those of a region only a later row covers, a Drain that
		// gives up still admitting, an access ended at a row's Fault while
		// its sibling runs, names read after the end, and Cancel calling
		// back after a true Drain.
		broken.UnregisterFirstRowOnly:   nil,
		broken.AdmitsAfterDrainDeadline: nil,
		broken.EndsAtFirstFault:         nil,
		broken.NamesAfterEnd:            nil,
		broken.CancelCallsBack:          nil,

		// A lookup answering one presence too few is the lookup's error,
		// and only its: a lookup touches no lent memory, so the backend
		// stays open for calls.
		broken.WrongLookupCount: func(t *testing.T, c *brokenCase) {
			c.seed(t, "row-0", 64)
			_, err := c.b.Lookup(context.Background(), rowsView(2), LookupOptions{Every: true})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "presences for")
			assert.Empty(t, c.b.Stats().Violation, "not a protocol violation")
			_, err = c.b.Publish(rowsView(1), nil)
			assert.NoError(t, err)
		},
		// The other lookup rules break promises only the conformance
		// suite can see (a Present for what no get could read whole, an
		// answer out of order, a probe past its deadline, a Drain that
		// lies about probes inside the store, a lookup holding up
		// admission); its self-test pairs each with its check.
		broken.AdmitsLookupAfterDrain:     nil,
		broken.PresentForAbsent:           nil,
		broken.LookupRowsReversed:         nil,
		broken.PresentWhileWriting:        nil,
		broken.PresentForOwnPut:           nil,
		broken.PresentForTorn:             nil,
		broken.LookupIgnoresDeadline:      nil,
		broken.DrainTrueWhileLookupInside: nil,
		broken.LookupBlocksAdmission:      nil,
		// A batch that only an earlier region keeps busy (a driver from
		// New registers no batches), a registration that may be live
		// reported as a clean refusal (nothing the driver says tells
		// them apart), an Unprovable access reported Ended a second
		// later (the backend records a call's access end once and reads
		// nothing of its later snapshots), and Capabilities that change
		// after a crash (read once, at Bind): only the conformance suite
		// sees these; its self-test pairs each with its check.
		broken.TogetherBusyLastOnly:         nil,
		broken.CleanRefusalWhenLive:         nil,
		broken.UnprovableEndsLater:          nil,
		broken.CapabilitiesChangeAfterCrash: nil,
		// The recycle rules bend Recycle, which a backend calls only in
		// Reclaim, and these tests' backends never reclaim: a transfer
		// left running, a callback before the end it announces, a
		// Recycle that gives up having ended access, a Recycle after
		// Close and an Unregister let through during one are the
		// conformance suite's to see; its self-test pairs each with its
		// check.
		broken.RecycleStopsOneTransfer:  nil,
		broken.RecycleCallsBackFirst:    nil,
		broken.RecycleGivesUpEndsAccess: nil,
		broken.RecycleAfterClose:        nil,
		broken.UnregisterDuringRecycle:  nil,
		// The further lookup rules bend answers the backend passes on as
		// they are (a Present for a declined put, an Absent for a name the
		// store failed to answer for, an InFlight held too long or too
		// short), or calls it never makes (a lookup after a Drain or
		// after Close: the backend asks nothing then), or a lookup's
		// names read after it returned, which its own key maker does not
		// watch: only the conformance suite sees these; its self-test
		// pairs each with its check.
		broken.PresentForDeclined:     nil,
		broken.AbsentWhenLookupFails:  nil,
		broken.LookupAfterFalseDrain:  nil,
		broken.LookupAfterClose:       nil,
		broken.LookupNamesAfterReturn: nil,
		broken.QueuedPutNotInFlight:   nil,
		broken.InFlightAfterPutEnded:  nil,
	}
	for _, rule := range broken.AllRules() {
		scenario, ok := scenarios[rule]
		require.True(t, ok, "no scenario for rule %s", rule)
		if scenario == nil {
			continue
		}
		t.Run(string(rule), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := memdrv.NewStore()
				d, err := broken.New(rule, store, memdrv.Options{MaxRowsPerOp: 1, Workers: 1, Logger: slog.New(slog.DiscardHandler)})
				require.NoError(t, err)
				l := newLender(t, 16, contract.Host)
				c := &brokenCase{store: store, d: d, l: l, b: memBackend(t, d, l, Config{})}
				scenario(t, c)
			})
		})
	}
}

// A driver that never calls onChange: the backend learns nothing after
// its one poll at admission, so the attempt stays open, counted in flight,
// and the hold is kept.
func TestBrokenDriverWithoutCallbacksKeepsTheHold(t *testing.T) {
	store := memdrv.NewStore()
	d, err := broken.New(broken.NoOnChange, store, memdrv.Options{Workers: 1})
	require.NoError(t, err)
	l := newLender(t, 16, contract.Host)
	logs := &logRecords{}
	b := memBackend(t, d, l, Config{Logger: slogOf(logs)})
	store.Set(memKey(t, b, "n0"), bytes.Repeat([]byte{1}, lenderSlotBytes))

	resume := d.Inner().Pause()
	a, err := b.Fetch(rowsView(1), nil)
	require.NoError(t, err)
	resume()
	require.True(t, d.Inner().Drain(context.Background()), "the row ran and its access ended in the driver")

	_, ok := a.Outcome()
	assert.False(t, ok, "without a callback the backend never learns")
	assert.EqualValues(t, 1, b.Stats().CallsInFlight)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.Equal(t, []string{"attempt 1 (fetch)", "region 0"}, b.Shutdown(ctx))
	out, ok := a.Outcome()
	require.True(t, ok)
	require.ErrorIs(t, out.Fault, ErrOutcomeForced)
	assert.False(t, a.Quiesced())
	assert.Zero(t, l.Released())
}
