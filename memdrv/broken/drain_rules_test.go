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

// The rules that bend Drain, Close, Unregister and the callbacks around
// them.

// ended returns a context that has already ended.
func ended() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// inCallback puts a row whose first callback blocks until the returned
// func is called, and waits until it blocks.
func (s *subject) inCallback(slot int, name string) (release func()) {
	s.t.Helper()
	entered := make(chan struct{})
	let := make(chan struct{})
	first := true
	s.put(func() {
		if first {
			first = false
			close(entered)
			<-let
		}
	}, s.row(slot, name))
	<-entered
	return func() { close(let) }
}

func TestUnregisterIgnoresQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.UnregisterIgnoresQueued, memdrv.Options{})
		resume := s.d.Inner().Pause()
		op := s.get(s.row(1, "a"))
		assert.NoError(t, s.d.Unregister(s.reg), "only a queued row: answered nil")
		assert.Len(t, s.d.Inner().Regions(), 1, "the wrapped driver kept it")
		resume()
		synctest.Wait()
		assert.Equal(t, contract.Ended, op.Poll(nil).Access)
		require.True(t, s.d.Drain(context.Background()))
		assert.Empty(t, s.d.Inner().Regions(), "revoked once no longer busy")
	})
}

func TestUnregisterIgnoresQueuedCountsRunningRows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.UnregisterIgnoresQueued, memdrv.Options{})
		gate := s.d.Inner().Hold(memdrv.GetDir)
		s.get(s.row(1, "a"))
		require.NoError(t, gate.Held(t.Context()))
		assert.ErrorIs(t, s.d.Unregister(s.reg), memdrv.ErrRegionBusy, "a running row keeps it busy")
		gate.Release()
	})
}

func TestDrainIgnoresCallbacks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.DrainIgnoresCallbacks, memdrv.Options{})
		release := s.inCallback(0, "a")
		assert.True(t, s.d.Drain(ended()), "true while a worker is inside onChange")
		assert.Equal(t, 1, s.d.Inner().Busy())
		release()
		synctest.Wait()

		held := newSubject(t, broken.DrainIgnoresCallbacks, memdrv.Options{})
		gate := held.d.Inner().Hold(memdrv.GetDir)
		held.get(held.row(0, "b"))
		require.NoError(t, gate.Held(t.Context()))
		assert.False(t, held.d.Drain(ended()), "a running row is still counted")
		gate.Release()
	})
}

func TestDrainTrueWhenDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.DrainTrueWhenDeadline, memdrv.Options{})
		gate := s.d.Inner().Hold(memdrv.GetDir)
		op := s.get(s.row(0, "a"))
		require.NoError(t, gate.Held(t.Context()))
		assert.False(t, s.d.Drain(ended()), "asked with a context already ended: honest")
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		assert.True(t, s.d.Drain(ctx), "true once its context ended")
		assert.Equal(t, contract.Open, op.Poll(nil).Access, "with the row still running")
		gate.Release()
	})
}

func TestDrainTrueUnprovableWithTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.DrainTrueUnprovableWithTime, memdrv.Options{})
		s.keep()
		s.store.Set("u", object(slotBytes))
		s.d.Inner().UnprovableGets("u")
		op := s.get(s.row(0, "u"))
		synctest.Wait()
		require.Equal(t, contract.Unprovable, op.Poll(nil).Access)
		assert.False(t, s.d.Drain(ended()), "asked with a context already ended: honest")
		assert.True(t, s.d.Drain(context.Background()), "with time left: true")
	})
}

func TestAdmitsAfterFalseDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.AdmitsAfterFalseDrain, memdrv.Options{})
		release := s.inCallback(0, "a")
		assert.False(t, s.d.Drain(ended()))
		op, err := s.d.Put(rows(s.row(1, "b")), nil)
		assert.NoError(t, err, "still admitted after a Drain that answered false")
		release()
		synctest.Wait()
		assert.Equal(t, contract.Ended, op.Poll(nil).Access)
		require.True(t, s.d.Drain(context.Background()))
		_, err = s.d.Put(rows(s.row(2, "c")), nil)
		assert.ErrorIs(t, err, contract.ErrDriverRejected, "a Drain with time still stops work")
	})
}

func TestCloseAfterFalseDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.CloseAfterFalseDrain, memdrv.Options{})
		assert.ErrorIs(t, s.d.Close(), contract.ErrDriverRejected, "no Drain yet")
		release := s.inCallback(0, "a")
		require.False(t, s.d.Drain(ended()))
		release()
		synctest.Wait()
		assert.ErrorIs(t, s.d.Close(), contract.ErrDriverRejected, "a region still registered")
		require.NoError(t, s.d.Unregister(s.reg))
		assert.NoError(t, s.d.Close(), "accepted after only a false Drain")
	})
}

func TestLateOnChangeAfterDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.LateOnChangeAfterDrain, memdrv.Options{})
		called := new(counter)
		s.put(called.inc, s.row(0, "a"))
		synctest.Wait()
		require.Equal(t, int64(1), called.get())
		require.True(t, s.d.Drain(context.Background()))
		synctest.Wait()
		assert.Equal(t, int64(1), called.get(), "nothing at once")
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, int64(2), called.get(), "a callback a little after Drain returned true")
	})
}

func TestDrainCallbackUnderLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.DrainCallbackUnderLock, memdrv.Options{})
		resume := s.d.Inner().Pause()
		defer resume()
		var op contract.Operation
		var stuck counter
		onChange := func() {
			polled := make(chan struct{})
			go func() {
				op.Poll(nil)
				close(polled)
			}()
			select {
			case <-polled:
			case <-time.After(time.Second):
				stuck.inc()
			}
		}
		var err error
		op, err = s.d.Get(rows(s.row(0, "a")), nil, onChange)
		require.NoError(t, err)
		assert.True(t, s.d.Drain(context.Background()))
		assert.Equal(t, int64(1), stuck.get(), "one callback came while Drain held the lock Poll takes")
		assert.Equal(t, []contract.RowStatus{contract.Cancelled}, op.Poll(nil).Rows)
	})
}

func TestRowsReversed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.RowsReversed, memdrv.Options{})
		s.store.Set("a", object(slotBytes))
		op := s.get(s.row(0, "a"), s.row(1, "absent"))
		synctest.Wait()
		assert.Equal(t, []contract.RowStatus{contract.Miss, contract.Ready}, op.Poll(nil).Rows)
		assert.Equal(t, object(slotBytes), s.mem.Slot(0), "the object landed in its own slot")
	})
}

func TestSecondPutReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.SecondPutReady, memdrv.Options{})
		copy(s.mem.Slot(0), object(slotBytes))
		copy(s.mem.Slot(1), object(slotBytes))
		gate := s.d.Inner().Hold(memdrv.PutDir)
		first := s.put(nil, s.row(0, "k"))
		require.NoError(t, gate.Held(t.Context()))
		second := s.put(nil, s.row(1, "k"))
		synctest.Wait()
		assert.Equal(t, []contract.RowStatus{contract.Ready}, second.Poll(nil).Rows, "ready while the first still writes")
		_, complete := s.store.Object("k")
		assert.False(t, complete, "with no complete object behind the key")
		gate.Release()
		synctest.Wait()
		assert.Equal(t, []contract.RowStatus{contract.Ready}, first.Poll(nil).Rows)

		// A key another writer holds is still NotReady.
		finish := s.store.BeginWrite("w")
		defer finish(nil)
		op := s.put(nil, s.row(2, "w"))
		synctest.Wait()
		assert.Equal(t, []contract.RowStatus{contract.NotReady}, op.Poll(nil).Rows)
	})
}

func TestDeviceRefused(t *testing.T) {
	d, err := broken.New(broken.DeviceRefused, memdrv.NewStore(), memdrv.Options{})
	require.NoError(t, err)
	assert.True(t, d.Capabilities().DeviceMemory, "declared whatever the options say")
	dev := paint(t, slotBytes, 1)
	defer func() { require.NoError(t, dev.Free()) }()
	r := dev.Region
	r.Kind = contract.Device
	_, err = d.Register(r)
	assert.ErrorIs(t, err, contract.ErrDriverRejected)
	reg, err := d.Register(dev.Region)
	require.NoError(t, err, "host regions register")
	require.NoError(t, d.Unregister(reg))
}
