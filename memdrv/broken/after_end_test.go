package broken_test

import (
	"bytes"
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/broken"
)

// The rules that touch memory after the driver said its access ended.

// fill sets every byte of slot i of the subject's region to b.
func (s *subject) fill(i int, b byte) {
	for j := range slotBytes {
		s.mem.Slot(i)[j] = b
	}
}

func TestGetWritesAfterEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.GetWritesAfterEnd, memdrv.Options{})
		obj := object(slotBytes)
		s.store.Set("a", obj)
		op := s.get(s.row(0, "a"))
		synctest.Wait()
		require.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Ready}, Access: contract.Ended}, op.Poll(nil))
		s.fill(0, fillByte)                              // the lender reuses the slot
		require.True(t, s.d.Drain(context.Background())) // the driver's next call
		assert.Equal(t, obj, s.mem.Slot(0), "the object written again after access ended")

		s.fill(0, fillByte)
		op.Poll(nil)
		assert.True(t, untouched(s.mem.Slot(0)), "once only")
	})
}

func TestGetWritesAfterEndLeavesPutsAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.GetWritesAfterEnd, memdrv.Options{})
		copy(s.mem.Slot(0), object(slotBytes))
		op := s.put(nil, s.row(0, "a"))
		synctest.Wait()
		require.Equal(t, contract.Ended, op.Poll(nil).Access)
		s.fill(0, fillByte)
		op.Poll(nil)
		assert.True(t, untouched(s.mem.Slot(0)))
	})
}

func TestPutRereadsAfterEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.PutRereadsAfterEnd, memdrv.Options{})
		obj := object(slotBytes)
		copy(s.mem.Slot(0), obj)
		op := s.put(nil, s.row(0, "a"))
		synctest.Wait()
		require.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Ready}, Access: contract.Ended}, op.Poll(nil))
		got, _ := s.store.Object("a")
		require.Equal(t, obj, got)

		s.fill(0, 0x55)                             // the lender reuses the slot
		_, err := s.d.Put(rows(s.row(1, "b")), nil) // the driver's next call
		require.NoError(t, err)
		got, _ = s.store.Object("a")
		assert.Equal(t, bytes.Repeat([]byte{0x55}, slotBytes), got, "the slot read again and stored after access ended")
	})
}

func TestCancelEndsRunningRow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.CancelEndsRunningRow, memdrv.Options{})
		obj := object(slotBytes)
		s.store.Set("a", obj)
		gate := s.d.Inner().Hold(memdrv.GetDir)
		op := s.get(s.row(0, "a"))
		require.NoError(t, gate.Held(t.Context()))
		op.Cancel()
		ended := contract.OpState{Rows: []contract.RowStatus{contract.Cancelled}, Access: contract.Ended}
		assert.Equal(t, ended, op.Poll(nil), "the running row reported cancelled, access ended")
		assert.Equal(t, 1, s.d.Inner().Live(), "while the transfer still runs")

		gate.Release()
		synctest.Wait()
		assert.Equal(t, obj, s.mem.Slot(0), "the transfer wrote the slot after access ended")
		assert.Equal(t, ended, op.Poll(nil), "and the operation still says so")

		// Rows no worker took are cancelled as memdrv's are, no lie needed.
		resume := s.d.Inner().Pause()
		defer resume()
		queued := s.get(s.row(1, "a"))
		queued.Cancel()
		assert.Equal(t, ended, queued.Poll(nil))
		assert.Equal(t, 0, s.d.Inner().Live())
	})
}
