package broken_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/broken"
	"github.com/kvshare/kvshare/memdrv/internal/testkeys"
)

const (
	slotBytes = 64
	fillByte  = 0xAA
)

// subject is one broken driver with a registered region whose bytes all
// start as fillByte. When the test ends, the wrapped driver (not the
// deviation) drains, the region is revoked there and the memory freed,
// each of which must succeed, unless the test called keep.
type subject struct {
	t     *testing.T
	d     *broken.Driver
	store *memdrv.Store
	mem   *memdrv.Memory
	reg   contract.Registration
	kept  bool
}

func newSubject(t *testing.T, rule broken.Rule, o memdrv.Options) *subject {
	t.Helper()
	o.Logger = slog.New(slog.DiscardHandler)
	st := memdrv.NewStore()
	d, err := broken.New(rule, st, o)
	require.NoError(t, err)
	require.Equal(t, rule, d.Rule())
	s := &subject{t: t, d: d, store: st, mem: paint(t, slotBytes, 4)}
	s.reg, err = d.Register(s.mem.Region)
	require.NoError(t, err)
	t.Cleanup(func() {
		if s.kept {
			assert.ErrorIs(t, s.mem.Free(), memdrv.ErrMemoryLent, "kept memory is not freed")
			return
		}
		inner := d.Inner()
		require.True(t, inner.Drain(context.Background()), "every access ended")
		require.NoError(t, inner.Unregister(s.reg))
		require.NoError(t, s.mem.Free())
	})
	return s
}

// keep says the subject's region stays lent for good (an unprovable
// operation pins it): the memory is not freed, and Free must refuse it.
func (s *subject) keep() { s.kept = true }

// paint maps memory of n slots whose every byte is fillByte; the caller
// frees it.
func paint(t *testing.T, sb int64, n int) *memdrv.Memory {
	t.Helper()
	mem, err := memdrv.Alloc(sb, n, contract.Host)
	require.NoError(t, err)
	for i := range mem.Bytes {
		mem.Bytes[i] = fillByte
	}
	return mem
}

// row is a row named name of one whole slot of the subject's region.
// Under the tests' key maker its store key is the name itself.
func (s *subject) row(slot int, name string) contract.Row {
	return contract.Row{Name: []byte(name), Spans: []contract.Span{s.mem.Region.Slot(slot)}}
}

// rows is a batch under the tests' key maker, which keys a row by its
// name as it is: the row named "k" is stored under the key "k".
func rows(r ...contract.Row) contract.RowBatch {
	return contract.RowBatch{Keys: testkeys.Plain{}, Rows: r}
}

func (s *subject) put(onChange func(), r ...contract.Row) contract.Operation {
	s.t.Helper()
	op, err := s.d.Put(rows(r...), onChange)
	require.NoError(s.t, err)
	return op
}

func (s *subject) get(r ...contract.Row) contract.Operation {
	s.t.Helper()
	op, err := s.d.Get(rows(r...), nil, nil)
	require.NoError(s.t, err)
	return op
}

func object(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i) | 1 // never fillByte's even value 0xAA
	}
	return b
}

func untouched(b []byte) bool { return bytes.Count(b, []byte{fillByte}) == len(b) }

type counter struct{ n atomic.Int64 }

func (c *counter) inc()       { c.n.Add(1) }
func (c *counter) get() int64 { return c.n.Load() }

func TestRules(t *testing.T) {
	first := []broken.Rule{
		broken.WrongResultCount, broken.NoOnChange, broken.OnChangeAfterDrain,
		broken.AccessEndsBeforeResults, broken.ResultsChangeAfterFinal, broken.UnregisterWhileBusy,
		broken.DrainTrueWhileLive, broken.UnwrappedError, broken.WritesOutsideSpan,
		broken.LongObjectSpills, broken.ShortObjectReady, broken.ReadyForAbsent,
		broken.IgnoresCancel, broken.UnprovableNotTerminal, broken.PanicsInPut, broken.NilOperation,
	}
	assert.Equal(t, first, broken.Rules(), "the first sixteen, in the agreed order")
	all := broken.AllRules()
	assert.Equal(t, append(first,
		broken.GetWritesAfterEnd, broken.PutRereadsAfterEnd, broken.CancelEndsRunningRow,
		broken.UnregisterIgnoresQueued, broken.DrainIgnoresCallbacks, broken.DrainTrueWhenDeadline,
		broken.DrainTrueUnprovableWithTime, broken.AdmitsAfterFalseDrain, broken.CloseAfterFalseDrain,
		broken.RowsReversed, broken.SecondPutReady, broken.LateOnChangeAfterDrain,
		broken.DrainCallbackUnderLock, broken.DeviceRefused,
		broken.UnregisterFirstRowOnly, broken.AdmitsAfterDrainDeadline, broken.EndsAtFirstFault,
		broken.NamesAfterEnd, broken.CancelCallsBack,
		broken.WrongLookupCount, broken.AdmitsLookupAfterDrain, broken.PresentForAbsent,
		broken.LookupRowsReversed, broken.PresentWhileWriting, broken.PresentForOwnPut,
		broken.PresentForTorn, broken.LookupIgnoresDeadline, broken.DrainTrueWhileLookupInside,
		broken.LookupBlocksAdmission,
		broken.TogetherBusyLastOnly, broken.CleanRefusalWhenLive, broken.UnprovableEndsLater,
		broken.CapabilitiesChangeAfterCrash,
		broken.RecycleStopsOneTransfer, broken.RecycleCallsBackFirst, broken.RecycleGivesUpEndsAccess,
		broken.RecycleAfterClose, broken.UnregisterDuringRecycle,
		broken.PresentForDeclined, broken.AbsentWhenLookupFails, broken.LookupAfterFalseDrain,
		broken.LookupAfterClose, broken.LookupNamesAfterReturn, broken.QueuedPutNotInFlight,
		broken.InFlightAfterPutEnded,
	), all, "every rule, in the agreed order")
	seen := map[broken.Rule]bool{}
	for _, r := range all {
		assert.False(t, seen[r], "rule %s twice", r)
		seen[r] = true
		assert.NotEmpty(t, r.String())
	}
	all[0] = "changed"
	assert.Equal(t, broken.WrongResultCount, broken.AllRules()[0], "a fresh slice each time")
	rules := broken.Rules()
	rules[0] = "changed"
	assert.Equal(t, broken.WrongResultCount, broken.Rules()[0], "a fresh slice each time")
}

func TestNewRefusesAnUnknownRule(t *testing.T) {
	d, err := broken.New("no-such-rule", memdrv.NewStore(), memdrv.Options{})
	require.Error(t, err)
	assert.Nil(t, d)
	assert.Contains(t, err.Error(), `"no-such-rule"`)
}

func TestWrongResultCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.WrongResultCount, memdrv.Options{})
		op := s.put(nil, s.row(0, "a"), s.row(1, "b"))
		synctest.Wait()
		assert.Len(t, op.Poll(nil).Rows, 1, "two rows, one status")
		dst := make([]contract.RowStatus, 4)
		assert.Len(t, op.Poll(dst).Rows, 1, "into a dst with room, too")
	})
}

func TestNoOnChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.NoOnChange, memdrv.Options{})
		called := new(counter)
		op := s.put(called.inc, s.row(0, "a"))
		synctest.Wait()
		assert.Equal(t, contract.Ended, op.Poll(nil).Access)
		assert.Zero(t, called.get(), "the operation changed, no callback came")
	})
}

func TestOnChangeAfterDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.OnChangeAfterDrain, memdrv.Options{})
		called := new(counter)
		s.put(called.inc, s.row(0, "a"))
		synctest.Wait()
		require.Equal(t, int64(1), called.get())
		require.True(t, s.d.Drain(context.Background()))
		assert.Equal(t, int64(1), called.get())
		require.NoError(t, s.d.Unregister(s.reg))
		assert.Equal(t, int64(2), called.get(), "a callback after Drain returned true")
	})
}

func TestAccessEndsBeforeResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.AccessEndsBeforeResults, memdrv.Options{})
		gate := s.d.Inner().Hold(memdrv.GetDir)
		op := s.get(s.row(0, "a"))
		require.NoError(t, gate.Held(t.Context()))
		assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Pending}, Access: contract.Ended}, op.Poll(nil))
		assert.Equal(t, 1, s.d.Inner().Live(), "the access is in fact open")
		gate.Release()
	})
}

func TestResultsChangeAfterFinal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.ResultsChangeAfterFinal, memdrv.Options{})
		op := s.put(nil, s.row(0, "a"))
		synctest.Wait()
		assert.Equal(t, []contract.RowStatus{contract.Ready}, op.Poll(nil).Rows)
		assert.Equal(t, []contract.RowStatus{contract.Fault}, op.Poll(nil).Rows, "the final Ready changed")

		// A caller polling into one buffer sees the same: the rule
		// remembers what it showed, not what dst held.
		fresh := s.put(nil, s.row(2, "c"))
		synctest.Wait()
		buf := make([]contract.RowStatus, 0, 4)
		st := fresh.Poll(buf)
		assert.Equal(t, []contract.RowStatus{contract.Ready}, st.Rows)
		assert.Equal(t, []contract.RowStatus{contract.Fault}, fresh.Poll(st.Rows).Rows, "the final Ready changed")
		assert.Equal(t, []contract.RowStatus{contract.Fault}, fresh.Poll(buf).Rows)

		// Cancel still reaches the wrapped operation.
		resume := s.d.Inner().Pause()
		defer resume()
		queued := s.put(nil, s.row(1, "b"))
		queued.Cancel()
		assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Cancelled}, Access: contract.Ended}, queued.Poll(nil))
	})
}

func TestUnregisterWhileBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.UnregisterWhileBusy, memdrv.Options{})
		gate := s.d.Inner().Hold(memdrv.GetDir)
		op := s.get(s.row(1, "a"))
		require.NoError(t, gate.Held(t.Context()))
		assert.NoError(t, s.d.Unregister(s.reg), "Unregister succeeds with an operation open")
		assert.Equal(t, contract.Open, op.Poll(nil).Access)
		assert.Len(t, s.d.Inner().Regions(), 1, "the wrapped driver kept it")

		gate.Release()
		require.True(t, s.d.Drain(context.Background()))
		assert.Empty(t, s.d.Inner().Regions(), "revoked once no longer busy")
		assert.NoError(t, s.d.Close())
	})
}

func TestDrainTrueWhileLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.DrainTrueWhileLive, memdrv.Options{})
		gate := s.d.Inner().Hold(memdrv.GetDir)
		op := s.get(s.row(0, "a"))
		require.NoError(t, gate.Held(t.Context()))
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		assert.True(t, s.d.Drain(ctx), "Drain says true")
		assert.Equal(t, contract.Open, op.Poll(nil).Access, "with an operation open")
		gate.Release()
	})
}

func TestUnwrappedError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.UnwrappedError, memdrv.Options{})
		inner := memdrv.New(memdrv.NewStore(), memdrv.Options{})
		bad := rows(s.row(0, "a"), s.row(1, "a"))
		_, want := inner.Put(bad, nil)
		require.ErrorIs(t, want, contract.ErrDriverRejected)

		for name, call := range map[string]func() (contract.Operation, error){
			"put": func() (contract.Operation, error) { return s.d.Put(bad, nil) },
			"get": func() (contract.Operation, error) { return s.d.Get(bad, nil, nil) },
		} {
			op, err := call()
			assert.Nil(t, op, name)
			require.Error(t, err, name)
			assert.False(t, errors.Is(err, contract.ErrDriverRejected), "%s: %v wraps nothing", name, err)
			assert.Contains(t, err.Error(), `(key "a"): name repeats row 0`, name)
		}
		assert.Zero(t, s.d.Inner().Live(), "nothing was admitted")
	})
}

func TestWritesOutsideSpan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.WritesOutsideSpan, memdrv.Options{})
		s.store.Set("k", object(slotBytes))
		op := s.get(s.row(1, "k"))
		synctest.Wait()
		assert.Equal(t, []contract.RowStatus{contract.Ready}, op.Poll(nil).Rows)
		assert.Equal(t, object(slotBytes), s.mem.Slot(1))
		next := s.mem.Slot(2)
		assert.Equal(t, byte(^byte(fillByte)), next[0], "the byte past the span was written")
		assert.True(t, untouched(next[1:]))
	})
}

func TestWritesOutsideSpanStaysInLentMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A region that ends exactly at its last slot: there is no byte
		// past it to write, and the process must survive.
		d, err := broken.New(broken.WritesOutsideSpan, memdrv.NewStore(), memdrv.Options{})
		require.NoError(t, err)
		mem, err := memdrv.Alloc(4096, 1, contract.Host)
		require.NoError(t, err)
		defer func() { require.NoError(t, mem.Free()) }()
		require.Equal(t, mem.Region.SlotBytes, mem.Region.Len)
		reg, err := d.Register(mem.Region)
		require.NoError(t, err)
		copy(mem.Slot(0), object(4096))
		put, err := d.Put(rows(contract.Row{Name: []byte("k"), Spans: []contract.Span{mem.Region.Slot(0)}}), nil)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, []contract.RowStatus{contract.Ready}, put.Poll(nil).Rows)
		get, err := d.Get(rows(contract.Row{Name: []byte("k"), Spans: []contract.Span{mem.Region.Slot(0)}}), nil, nil)
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, []contract.RowStatus{contract.Ready}, get.Poll(nil).Rows)
		require.True(t, d.Drain(context.Background()))
		require.NoError(t, d.Unregister(reg))
	})
}

func TestLongObjectSpills(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.LongObjectSpills, memdrv.Options{})
		long := object(slotBytes + slotBytes/2)
		s.store.Set("k", long)
		op := s.get(s.row(1, "k"))
		synctest.Wait()
		assert.Equal(t, []contract.RowStatus{contract.Fault}, op.Poll(nil).Rows)
		assert.Equal(t, long[:slotBytes], s.mem.Slot(1), "written although refused")
		assert.Equal(t, long[slotBytes:], s.mem.Slot(2)[:slotBytes/2], "and past the slot")
		assert.True(t, untouched(s.mem.Slot(2)[slotBytes/2:]))
	})
}

func TestShortObjectReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.ShortObjectReady, memdrv.Options{})
		s.store.Set("k", object(slotBytes/2))
		op := s.get(s.row(0, "k"))
		synctest.Wait()
		assert.Equal(t, []contract.RowStatus{contract.Ready}, op.Poll(nil).Rows, "a short object answers Ready")
		assert.Equal(t, object(slotBytes/2), s.mem.Slot(0)[:slotBytes/2])
		assert.True(t, untouched(s.mem.Slot(0)[slotBytes/2:]))
	})
}

func TestReadyForAbsent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.ReadyForAbsent, memdrv.Options{})
		require.True(t, s.d.Capabilities().AbsentIsMiss)
		op := s.get(s.row(0, "absent"))
		synctest.Wait()
		assert.Equal(t, []contract.RowStatus{contract.Ready}, op.Poll(nil).Rows, "an absent key answers Ready")
		assert.True(t, untouched(s.mem.Bytes))
	})
}

func TestIgnoresCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.IgnoresCancel, memdrv.Options{NoCancel: true})
		assert.True(t, s.d.Capabilities().Cancel, "declares Cancel")
		resume := s.d.Inner().Pause()
		op := s.put(nil, s.row(0, "a"), s.row(1, "b"))
		op.Cancel()
		resume()
		synctest.Wait()
		assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Ready}, op.Poll(nil).Rows, "cancelled queued rows ran")
		assert.Equal(t, 2, s.store.Len())
	})
}

func TestUnprovableNotTerminal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.UnprovableNotTerminal, memdrv.Options{})
		s.keep()
		s.store.Set("k", object(slotBytes))
		s.d.Inner().UnprovableGets("k")
		op := s.get(s.row(0, "k"))
		synctest.Wait()
		assert.Equal(t, contract.Unprovable, op.Poll(nil).Access)
		assert.Equal(t, contract.Ended, op.Poll(nil).Access, "Unprovable turned into Ended")
		assert.Equal(t, 1, s.d.Inner().Unprovable(), "in fact it stays unprovable")
	})
}

func TestPanicsInPut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.PanicsInPut, memdrv.Options{})
		assert.Panics(t, func() { _, _ = s.d.Put(rows(s.row(0, "a")), nil) })
		assert.Zero(t, s.d.Inner().Admitted(memdrv.PutDir))
		op := s.get(s.row(0, "a"))
		synctest.Wait()
		assert.Equal(t, []contract.RowStatus{contract.Miss}, op.Poll(nil).Rows, "gets still work")
	})
}

func TestNilOperation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.NilOperation, memdrv.Options{})
		op, err := s.d.Get(rows(s.row(0, "a")), nil, nil)
		assert.Nil(t, op)
		assert.NoError(t, err)
		assert.Zero(t, s.d.Inner().Admitted(memdrv.GetDir))
		put := s.put(nil, s.row(0, "a"))
		synctest.Wait()
		assert.Equal(t, []contract.RowStatus{contract.Ready}, put.Poll(nil).Rows, "puts still work")
	})
}
