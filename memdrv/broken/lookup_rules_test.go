package broken_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/broken"
)

// lookup makes the subject's lookup of names (keyed by name).
func (s *subject) lookup(ctx context.Context, names ...string) ([]contract.Presence, error) {
	return s.d.Lookup(ctx, lookupBatch(names...), nil)
}

// answered is lookup of names the driver must answer.
func (s *subject) answered(names ...string) []contract.Presence {
	s.t.Helper()
	got, err := s.lookup(s.t.Context(), names...)
	require.NoError(s.t, err)
	return got
}

const (
	present  = contract.Present
	absent   = contract.Absent
	inFlight = contract.InFlight
	unknown  = contract.Unknown
)

// The lookup rules that bend an answer, each beside what memdrv answers
// for the same keys: a stored key, an absent one, one another writer
// holds, one a held put of this driver writes.
func TestLookupRulesBendTheAnswer(t *testing.T) {
	for _, c := range []struct {
		rule broken.Rule
		want []contract.Presence
	}{
		{broken.WrongLookupCount, []contract.Presence{present, absent, inFlight}},
		{broken.PresentForAbsent, []contract.Presence{present, present, inFlight, inFlight}},
		{broken.LookupRowsReversed, []contract.Presence{inFlight, inFlight, absent, present}},
		{broken.PresentWhileWriting, []contract.Presence{present, absent, present, inFlight}},
		{broken.PresentForOwnPut, []contract.Presence{present, absent, inFlight, present}},
		{broken.PresentForTorn, []contract.Presence{present, absent, inFlight, inFlight}},
	} {
		t.Run(string(c.rule), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newSubject(t, c.rule, memdrv.Options{})
				s.store.Set("stored", object(slotBytes))
				finish := s.store.BeginWrite("theirs")
				defer finish(nil)
				gate := s.d.Inner().Hold(memdrv.PutDir)
				defer gate.Release()
				s.put(nil, s.row(0, "ours"))
				require.NoError(t, gate.Held(t.Context()))
				assert.Equal(t, c.want, s.answered("stored", "absent", "theirs", "ours"))
				gate.Release()
				synctest.Wait()
				assert.Equal(t, present, s.answered("ours", "stored")[0], "once the put ended Ready, present under every rule")
			})
		})
	}
}

// PresentForTorn answers Present for a key whose put crashed in the
// store; memdrv, Absent.
func TestPresentForTorn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.PresentForTorn, memdrv.Options{})
		s.d.Inner().Crash(memdrv.PutDir)
		op := s.put(nil, s.row(0, "torn"))
		synctest.Wait()
		require.Equal(t, []contract.RowStatus{contract.Fault}, op.Poll(nil).Rows)
		assert.Equal(t, []contract.Presence{present}, s.answered("torn"))
		got, err := s.d.Inner().Lookup(t.Context(), lookupBatch("torn"), nil)
		require.NoError(t, err)
		assert.Equal(t, []contract.Presence{absent}, got, "the truth")
	})
}

// AdmitsLookupAfterDrain answers after a Drain, from the store, and
// still refuses what memdrv refuses.
func TestAdmitsLookupAfterDrain(t *testing.T) {
	s := newSubject(t, broken.AdmitsLookupAfterDrain, memdrv.Options{})
	s.store.Set("stored", object(slotBytes))
	require.True(t, s.d.Drain(context.Background()))
	assert.Equal(t, []contract.Presence{present, absent}, s.answered("stored", "absent"))
	_, err := s.lookup(t.Context(), "a", "a")
	assert.ErrorIs(t, err, contract.ErrDriverRejected, "a name twice")
	_, err = s.d.Inner().Lookup(t.Context(), lookupBatch("stored"), nil)
	assert.ErrorIs(t, err, contract.ErrDriverRejected, "the wrapped driver refuses")
}

// A lookup held in the store: LookupIgnoresDeadline returns only once
// the store lets it go; DrainTrueWhileLookupInside answers true while it
// is inside; LookupBlocksAdmission holds up a put meanwhile.
func TestLookupHeldInTheStore(t *testing.T) {
	for _, c := range []struct {
		rule                              broken.Rule
		returned, drained, admittedAtOnce bool
	}{
		{broken.LookupIgnoresDeadline, false, false, true},
		{broken.DrainTrueWhileLookupInside, true, true, true},
		{broken.LookupBlocksAdmission, true, false, false},
	} {
		t.Run(string(c.rule), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newSubject(t, c.rule, memdrv.Options{})
				gate := s.d.Inner().HoldLookups()
				defer gate.Release()
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				answer := make(chan []contract.Presence, 1)
				go func() {
					got, _ := s.lookup(ctx, "held")
					answer <- got
				}()
				require.NoError(t, gate.Held(t.Context()))

				admitted := make(chan struct{})
				go func() {
					_, err := s.d.Put(rows(s.row(0, "beside")), nil)
					assert.NoError(t, err)
					close(admitted)
				}()
				synctest.Wait()
				select {
				case <-admitted:
					assert.True(t, c.admittedAtOnce, "admitted while the lookup is held")
				default:
					assert.False(t, c.admittedAtOnce, "held up by the lookup")
				}

				cancel()
				synctest.Wait()
				select {
				case got := <-answer:
					assert.True(t, c.returned, "returned at its context's end")
					assert.Equal(t, []contract.Presence{unknown}, got)
				default:
					assert.False(t, c.returned, "still waiting for the store")
				}
				if c.admittedAtOnce {
					assert.Equal(t, c.drained, s.d.Drain(ended()), "Drain with the lookup inside")
				}
				gate.Release()
				synctest.Wait()
				<-admitted
			})
		})
	}
}
