package broken_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/broken"
)

// The rules of Recycle (contract.Recycler).

// unprovable has the subject's driver get n stored keys ("u0", "u1", …)
// into slots 0 on, every transfer left running by the store, with
// onChange: one operation, Unprovable, leaving n transfers the store gave
// up on.
func (s *subject) unprovable(n int, onChange func()) contract.Operation {
	s.t.Helper()
	var rs []contract.Row
	for i := range n {
		key := fmt.Sprintf("u%d", i)
		s.store.Set(key, object(slotBytes))
		s.d.Inner().UnprovableGets(key)
		rs = append(rs, s.row(i, key))
	}
	op, err := s.d.Get(rows(rs...), nil, onChange)
	require.NoError(s.t, err)
	synctest.Wait()
	require.Equal(s.t, contract.Unprovable, op.Poll(nil).Access)
	return op
}

// written counts the slots of the first n that no longer hold fillByte.
func (s *subject) written(n int) int {
	c := 0
	for i := range n {
		if !untouched(s.mem.Slot(i)) {
			c++
		}
	}
	return c
}

func TestRecycleStopsOneTransfer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.RecycleStopsOneTransfer, memdrv.Options{})
		op := s.unprovable(3, nil)
		require.NoError(t, s.d.Recycle(t.Context()))
		assert.Equal(t, contract.Ended, op.Poll(nil).Access, "reported ended")
		assert.Zero(t, s.written(3), "nothing landed yet")
		assert.Equal(t, 2, s.d.Inner().FinishStrays(), "two of the three transfers still ran")
		assert.Equal(t, 2, s.written(3), "and wrote memory whose access ended")
	})
}

// With one transfer, stopping one stops them all: the rule shows only
// in an operation of several rows.
func TestRecycleStopsOneTransferOfOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.RecycleStopsOneTransfer, memdrv.Options{})
		op := s.unprovable(1, nil)
		require.NoError(t, s.d.Recycle(t.Context()))
		assert.Equal(t, contract.Ended, op.Poll(nil).Access)
		assert.Zero(t, s.d.Inner().FinishStrays())
		assert.Zero(t, s.written(1))
	})
}

func TestRecycleCallsBackFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.RecycleCallsBackFirst, memdrv.Options{})
		var recycling atomic.Bool
		var op contract.Operation
		var seen []contract.Access
		op = s.unprovable(2, func() {
			if recycling.Load() {
				seen = append(seen, op.Poll(nil).Access)
			}
		})
		recycling.Store(true)
		require.NoError(t, s.d.Recycle(t.Context()))
		recycling.Store(false)
		assert.Equal(t, []contract.Access{contract.Unprovable}, seen, "the one callback came before the end it announces was visible")
		assert.Equal(t, contract.Ended, op.Poll(nil).Access, "the end itself is there once Recycle returned")
		assert.Zero(t, s.d.Inner().FinishStrays(), "and every transfer was torn down")
	})
}

func TestRecycleGivesUpEndsAccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.RecycleGivesUpEndsAccess, memdrv.Options{})
		calls := new(counter)
		op := s.unprovable(1, calls.inc)
		gate := s.d.Inner().Hold(memdrv.PutDir)
		held := s.put(nil, s.row(2, "held"))
		require.NoError(t, gate.Held(t.Context()))
		before := calls.get()

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		err := s.d.Recycle(ctx)
		require.ErrorIs(t, err, contract.ErrDriverRejected, "it gave up: a row was held inside the store")
		assert.Equal(t, contract.Ended, op.Poll(nil).Access, "yet the unprovable operation reads ended")
		assert.Equal(t, before+1, calls.get(), "announced before Recycle returned")
		assert.Equal(t, 1, s.d.Inner().Unprovable(), "the wrapped driver knows the truth")
		assert.Equal(t, 1, s.d.Inner().FinishStrays(), "nothing was torn down: the transfer still ran")
		assert.Equal(t, 1, s.written(1), "and wrote memory reported ended")

		gate.Release()
		synctest.Wait()
		assert.Equal(t, contract.Ended, held.Poll(nil).Access)
		require.NoError(t, s.d.Recycle(t.Context()), "a Recycle with time ends the access for real")
		assert.Zero(t, s.d.Inner().Unprovable())
	})
}

// A Recycle that does not give up is memdrv's: it tears the transfer
// down and ends the access for real.
func TestRecycleGivesUpEndsAccessOnlyWhenItGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.RecycleGivesUpEndsAccess, memdrv.Options{})
		op := s.unprovable(1, nil)
		require.NoError(t, s.d.Recycle(t.Context()))
		assert.Equal(t, contract.Ended, op.Poll(nil).Access)
		assert.Zero(t, s.d.Inner().Unprovable())
		assert.Zero(t, s.d.Inner().FinishStrays(), "torn down")
	})
}

func TestRecycleAfterClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.RecycleAfterClose, memdrv.Options{})
		require.NoError(t, s.d.Recycle(t.Context()), "before Close: memdrv's")
		require.True(t, s.d.Drain(t.Context()))
		require.NoError(t, s.d.Unregister(s.reg))
		require.NoError(t, s.d.Close())
		assert.NoError(t, s.d.Recycle(t.Context()), "after Close: nil, where it is refused")
		assert.ErrorIs(t, s.d.Inner().Recycle(t.Context()), contract.ErrDriverRejected, "as memdrv's is")
	})
}

func TestUnregisterDuringRecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.UnregisterDuringRecycle, memdrv.Options{})
		_, other := s.other()
		gate := s.d.Inner().Hold(memdrv.PutDir)
		s.put(nil, s.row(0, "held"))
		require.NoError(t, gate.Held(t.Context()))
		done := make(chan error, 1)
		go func() { done <- s.d.Recycle(t.Context()) }()
		synctest.Wait()

		assert.NoError(t, s.d.Unregister(other), "while Recycle waits for the held row: nil")
		assert.Len(t, s.d.Inner().Regions(), 2, "the wrapped driver kept it")
		_, err := s.d.Put(rows(s.row(1, "during")), nil)
		assert.ErrorIs(t, err, contract.ErrDriverRejected, "Put is refused as memdrv refuses it")

		gate.Release()
		require.NoError(t, <-done)
		assert.ErrorIs(t, s.d.Unregister(0), contract.ErrDriverRejected, "after the Recycle: memdrv's answers")
		require.True(t, s.d.Drain(t.Context()))
		assert.Len(t, s.d.Inner().Regions(), 1, "revoked once a Drain returned true")
	})
}
