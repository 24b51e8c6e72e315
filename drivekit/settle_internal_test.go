package drivekit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// settling is a store that settles each row as it ends, and before
// ending the next reports what a Poll of the operation read then.
type settling struct {
	op    func() contract.Operation
	polls []contract.OpState
}

func (s *settling) Transfer(c *Call) {
	for i := range c.Keys {
		if op := s.op(); op != nil {
			s.polls = append(s.polls, op.Poll(nil))
		}
		c.Ends[i].Status = contract.Ready
		c.Settle(i)
		c.Settle(i) // twice: recorded once
	}
}

func TestSettleRecordsARowBeforeTheCallReturns(t *testing.T) {
	s := &settling{}
	d, reg, err := newRigWith(s, Options{Workers: 1, CallRows: 3})
	require.NoError(t, err)
	var op contract.Operation
	opened := make(chan struct{})
	s.op = func() contract.Operation { <-opened; return op }
	calls := 0
	done := make(chan struct{})
	op, err = d.Get(rows("a", "b", "c"), nil, func() {
		calls++
		if op.Poll(nil).Access == contract.Ended {
			close(done)
		}
	})
	require.NoError(t, err)
	close(opened)
	<-done
	pend, ready := contract.Pending, contract.Ready
	assert.Equal(t, []contract.OpState{
		{Rows: []contract.RowStatus{pend, pend, pend}, Access: contract.Open},
		{Rows: []contract.RowStatus{ready, pend, pend}, Access: contract.Open},
		{Rows: []contract.RowStatus{ready, ready, pend}, Access: contract.Open},
	}, s.polls, "each row reads final as soon as it is settled; access waits for the call")
	assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{ready, ready, ready}, Access: contract.Ended}, op.Poll(nil))
	assert.Equal(t, 4, calls, "one callback a settled row, one when the call returned")
	assert.EqualValues(t, 3, d.Stats().GetRows[contract.Ready], "a row settled twice counts once")
	require.True(t, d.Drain(t.Context()))
	require.NoError(t, d.Unregister(reg))
}
