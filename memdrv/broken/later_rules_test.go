package broken_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/broken"
)

// The rules of operations with rows in several regions, a Drain that
// gives up, a row failing beside a running one, names read late and
// Cancel after a true Drain.

// other registers a second region of one slot with the subject's driver;
// at the end of the test the wrapped driver revokes it and the memory is
// freed.
func (s *subject) other() (*memdrv.Memory, contract.Registration) {
	s.t.Helper()
	mem := paint(s.t, slotBytes, 1)
	reg, err := s.d.Register(mem.Region)
	require.NoError(s.t, err)
	s.t.Cleanup(func() {
		require.NoError(s.t, s.d.Inner().Unregister(reg))
		require.NoError(s.t, mem.Free())
	})
	return mem, reg
}

func TestUnregisterFirstRowOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.UnregisterFirstRowOnly, memdrv.Options{})
		mem, reg := s.other()
		resume := s.d.Inner().Pause()
		later := contract.Row{Name: []byte("later"), Spans: []contract.Span{mem.Region.Slot(0)}}
		op := s.get(s.row(0, "first"), later)
		assert.NoError(t, s.d.Unregister(reg), "only the second row covers it: answered nil")
		assert.Len(t, s.d.Inner().Regions(), 2, "the wrapped driver kept it")
		assert.ErrorIs(t, s.d.Unregister(s.reg), memdrv.ErrRegionBusy, "the first row's region: the truth")
		resume()
		synctest.Wait()
		assert.Equal(t, contract.Ended, op.Poll(nil).Access)
		require.True(t, s.d.Drain(context.Background()))
		assert.Len(t, s.d.Inner().Regions(), 1, "revoked once no longer busy")
		assert.NoError(t, s.d.Unregister(s.reg), "idle: revoked")
	})
}

func TestAdmitsAfterDrainDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.AdmitsAfterDrainDeadline, memdrv.Options{})
		gate := s.d.Inner().Hold(memdrv.PutDir)
		s.put(nil, s.row(0, "held"))
		require.NoError(t, gate.Held(t.Context()))
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		assert.False(t, s.d.Drain(ctx), "its context ended while the row was held")
		op, err := s.d.Put(rows(s.row(1, "after")), nil)
		assert.NoError(t, err, "still admitted after a Drain that gave up")
		gate.Release()
		synctest.Wait()
		assert.Equal(t, contract.Ended, op.Poll(nil).Access)
		require.True(t, s.d.Drain(context.Background()))
		_, err = s.d.Put(rows(s.row(2, "late")), nil)
		assert.ErrorIs(t, err, contract.ErrDriverRejected, "a Drain that ended true stopped work")
	})
}

// With time enough it waits for the running rows, then drains honestly;
// asked with a context already ended, it drains honestly at once.
func TestAdmitsAfterDrainDeadlineWaitsWithinItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.AdmitsAfterDrainDeadline, memdrv.Options{})
		gate := s.d.Inner().Hold(memdrv.PutDir)
		s.put(nil, s.row(0, "held"))
		require.NoError(t, gate.Held(t.Context()))
		assert.False(t, s.d.Drain(ended()), "a context already ended: honest")
		_, err := s.d.Put(rows(s.row(1, "after")), nil)
		assert.ErrorIs(t, err, contract.ErrDriverRejected, "that Drain stopped work")
		time.AfterFunc(time.Second, gate.Release)
		assert.True(t, s.d.Drain(context.Background()), "waited for the held row")
	})
}

func TestEndsAtFirstFault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.EndsAtFirstFault, memdrv.Options{})
		want := object(slotBytes)
		s.store.Set("held", want)
		s.store.Set("failing", object(slotBytes))
		s.d.Inner().FailReads("failing")
		gate := s.d.Inner().HoldKeys(memdrv.GetDir, "held")
		op := s.get(s.row(0, "held"), s.row(1, "failing"))
		require.NoError(t, gate.Held(t.Context()))
		synctest.Wait()
		lie := contract.OpState{Rows: []contract.RowStatus{contract.Fault, contract.Fault}, Access: contract.Ended}
		assert.Equal(t, lie, op.Poll(nil), "the failed row ended the operation, the held row with it")
		assert.True(t, untouched(s.mem.Slot(0)), "the held row has not run yet")
		gate.Release()
		synctest.Wait()
		assert.Equal(t, want, s.mem.Slot(0), "it ran on after access read Ended, and wrote its slot")
		assert.Equal(t, lie, op.Poll(nil), "every later Poll tells the same lie")
	})
}

// Rows that end without a Fault, or a Fault with nothing else pending,
// are left alone.
func TestEndsAtFirstFaultLeavesOtherEndsAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.EndsAtFirstFault, memdrv.Options{})
		s.store.Set("a", object(slotBytes))
		op := s.get(s.row(0, "a"), s.row(1, "absent"))
		synctest.Wait()
		assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Ready, contract.Miss}, Access: contract.Ended}, op.Poll(nil))
		s.d.Inner().FailReads("a")
		op = s.get(s.row(2, "a"))
		synctest.Wait()
		assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Fault}, Access: contract.Ended}, op.Poll(nil))
	})
}

func TestNamesAfterEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.NamesAfterEnd, memdrv.Options{})
		keys := &countingKeys{}
		op, err := s.d.Put(contract.RowBatch{Keys: keys, Rows: []contract.Row{s.row(0, "a"), s.row(1, "b")}}, nil)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, contract.Ended, op.Poll(nil).Access)
		before := keys.n.Load()
		require.True(t, s.d.Drain(context.Background()))
		assert.Equal(t, before+2, keys.n.Load(), "a key built again from each borrowed name, after access ended")
		require.True(t, s.d.Drain(context.Background()))
		assert.Equal(t, before+2, keys.n.Load(), "each operation logged once")
	})
}

func TestCancelCallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.CancelCallsBack, memdrv.Options{})
		called := new(counter)
		op := s.put(called.inc, s.row(0, "a"))
		synctest.Wait()
		require.True(t, s.d.Drain(context.Background()))
		before := called.get()
		op.Cancel()
		assert.Equal(t, before+1, called.get(), "called back inside Cancel, after a Drain that returned true")
	})
}
