package broken_test

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/broken"
)

// truth is what the wrapped driver answers for names: memdrv's exact
// lookup, beside the broken driver's.
func (s *subject) truth(names ...string) []contract.Presence {
	s.t.Helper()
	got, err := s.d.Inner().Lookup(s.t.Context(), lookupBatch(names...), nil)
	require.NoError(s.t, err)
	return got
}

// PresentForDeclined answers Present for a key whose put a full store
// declined: no object stands behind it, and a get of it misses.
func TestPresentForDeclined(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.PresentForDeclined, memdrv.Options{})
		s.store.SetFull()
		copy(s.mem.Slot(0), object(slotBytes))
		op := s.put(nil, s.row(0, "declined"))
		synctest.Wait()
		require.Equal(t, []contract.RowStatus{contract.Declined}, op.Poll(nil).Rows)
		assert.Equal(t, []contract.Presence{present}, s.answered("declined"))
		assert.Equal(t, []contract.Presence{absent}, s.truth("declined"), "the truth")
		_, stored := s.store.Object("declined")
		assert.False(t, stored, "no object stands behind the key")
		get := s.get(s.row(1, "declined"))
		synctest.Wait()
		assert.Equal(t, []contract.RowStatus{contract.Miss}, get.Poll(nil).Rows, "a get of it misses")
	})
}

// AbsentWhenLookupFails answers Absent for a name the store failed to
// answer for, where memdrv answers Unknown; the names the store did
// answer keep their answer.
func TestAbsentWhenLookupFails(t *testing.T) {
	s := newSubject(t, broken.AbsentWhenLookupFails, memdrv.Options{})
	s.store.Set("stored", object(slotBytes))
	s.store.Set("failing", object(slotBytes))
	s.d.Inner().FailLookups("failing")
	assert.Equal(t, []contract.Presence{present, absent, absent}, s.answered("stored", "failing", "absent"))
	assert.Equal(t, []contract.Presence{present, unknown, absent}, s.truth("stored", "failing", "absent"), "the truth")
}

// LookupAfterFalseDrain answers from the store after a Drain that
// answered false, where memdrv refuses; once a Drain answered true it
// refuses too.
func TestLookupAfterFalseDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.LookupAfterFalseDrain, memdrv.Options{})
		s.store.Set("stored", object(slotBytes))
		gate := s.d.Inner().Hold(memdrv.PutDir)
		defer gate.Release()
		copy(s.mem.Slot(0), object(slotBytes))
		s.put(nil, s.row(0, "held"))
		require.NoError(t, gate.Held(t.Context()))
		require.False(t, s.d.Drain(ended()), "a put is held in the store")
		assert.Equal(t, []contract.Presence{present, absent}, s.answered("stored", "absent"), "answered after a Drain that answered false")
		_, err := s.d.Inner().Lookup(t.Context(), lookupBatch("stored"), nil)
		assert.ErrorIs(t, err, contract.ErrDriverRejected, "the wrapped driver refuses")
		_, err = s.lookup(t.Context(), "a", "a")
		assert.ErrorIs(t, err, contract.ErrDriverRejected, "a name twice is still refused")
		gate.Release()
		synctest.Wait()
		require.True(t, s.d.Drain(context.Background()))
		_, err = s.lookup(t.Context(), "stored")
		assert.ErrorIs(t, err, contract.ErrDriverRejected, "refused after a Drain that answered true")
	})
}

// LookupAfterClose answers from the store after Close returned nil,
// where memdrv refuses.
func TestLookupAfterClose(t *testing.T) {
	st := memdrv.NewStore()
	d, err := broken.New(broken.LookupAfterClose, st, memdrv.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	st.Set("stored", object(slotBytes))
	_, err = d.Lookup(t.Context(), lookupBatch("stored"), nil)
	require.NoError(t, err)
	require.True(t, d.Drain(context.Background()))
	_, err = d.Lookup(t.Context(), lookupBatch("stored"), nil)
	assert.ErrorIs(t, err, contract.ErrDriverRejected, "refused after a Drain, before Close")
	require.NoError(t, d.Close())
	got, err := d.Lookup(t.Context(), lookupBatch("stored", "absent"), nil)
	require.NoError(t, err, "answered after Close")
	assert.Equal(t, []contract.Presence{present, absent}, got)
	_, err = d.Inner().Lookup(t.Context(), lookupBatch("stored"), nil)
	assert.ErrorIs(t, err, contract.ErrDriverRejected, "the wrapped driver refuses")
}

// LookupNamesAfterReturn builds every name's key of a lookup once more at
// the start of its next call (a Drain here), after Lookup returned;
// memdrv builds them only inside Lookup.
func TestLookupNamesAfterReturn(t *testing.T) {
	for _, c := range []struct {
		rule broken.Rule
		late int64
	}{
		{broken.LookupNamesAfterReturn, 2},
		{broken.PresentForAbsent, 0}, // memdrv's lookup, bent after the fact
	} {
		t.Run(string(c.rule), func(t *testing.T) {
			s := newSubject(t, c.rule, memdrv.Options{})
			keys := &countingKeys{}
			_, err := s.d.Lookup(t.Context(), contract.LookupBatch{Keys: keys, Names: [][]byte{[]byte("a"), []byte("b")}}, nil)
			require.NoError(t, err)
			before := keys.n.Load()
			require.True(t, s.d.Drain(context.Background()))
			assert.Equal(t, c.late, keys.n.Load()-before, "keys built after Lookup returned")
			require.True(t, s.d.Drain(context.Background()))
			assert.Equal(t, c.late, keys.n.Load()-before, "once")
		})
	}
}

// QueuedPutNotInFlight answers Absent for a key whose put no worker took
// yet, where memdrv answers InFlight; once a worker took the row (held
// in the store) it answers InFlight as memdrv does.
func TestQueuedPutNotInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.QueuedPutNotInFlight, memdrv.Options{})
		require.True(t, s.d.Capabilities().LookupInFlight, "it declares LookupInFlight")
		gate := s.d.Inner().Hold(memdrv.PutDir)
		defer gate.Release()
		resume := s.d.Inner().Pause()
		defer resume()
		copy(s.mem.Slot(0), object(slotBytes))
		op := s.put(nil, s.row(0, "queued"))
		synctest.Wait()
		assert.Equal(t, []contract.Presence{absent}, s.answered("queued"), "no worker took the row")
		assert.Equal(t, []contract.Presence{inFlight}, s.truth("queued"), "the truth: admitted is putting")
		resume()
		require.NoError(t, gate.Held(t.Context()))
		assert.Equal(t, []contract.Presence{inFlight}, s.answered("queued"), "a worker took the row")
		gate.Release()
		synctest.Wait()
		require.Equal(t, []contract.RowStatus{contract.Ready}, op.Poll(nil).Rows)
		assert.Equal(t, []contract.Presence{present}, s.answered("queued"))
	})
}

// InFlightAfterPutEnded answers InFlight for a key whose put was
// cancelled before any worker took it, where memdrv answers Absent
// (nothing writes it); a put that ended Ready reads Present.
func TestInFlightAfterPutEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.InFlightAfterPutEnded, memdrv.Options{})
		resume := s.d.Inner().Pause()
		copy(s.mem.Slot(0), object(slotBytes))
		copy(s.mem.Slot(1), object(slotBytes))
		cancelled := s.put(nil, s.row(0, "cancelled"))
		ready := s.put(nil, s.row(1, "ready"))
		cancelled.Cancel()
		synctest.Wait()
		require.Equal(t, []contract.RowStatus{contract.Cancelled}, cancelled.Poll(nil).Rows)
		resume()
		synctest.Wait()
		require.Equal(t, []contract.RowStatus{contract.Ready}, ready.Poll(nil).Rows)
		assert.Equal(t, []contract.Presence{inFlight, present}, s.answered("cancelled", "ready"))
		assert.Equal(t, []contract.Presence{absent, present}, s.truth("cancelled", "ready"), "the truth")
	})
}
