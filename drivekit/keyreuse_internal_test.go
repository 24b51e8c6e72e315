package drivekit

import (
	"slices"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// lingering is a store that, in its first call, settles every row, says
// so, and waits for release before it returns, reading its keys again
// last: what they read then is in after.
type lingering struct {
	settled, release chan struct{}
	first            bool
	before, after    []string
}

func newLingering() *lingering {
	return &lingering{settled: make(chan struct{}), release: make(chan struct{}), first: true}
}

func (s *lingering) Transfer(c *Call) {
	for i := range c.Keys {
		c.Ends[i].Status = contract.Ready
	}
	if !s.first {
		return
	}
	s.first = false
	s.before = slices.Clone(c.Keys) // the strings, over the kit's buffer
	for i := range c.Keys {
		c.Settle(i)
	}
	close(s.settled)
	<-s.release
	for _, k := range s.before {
		s.after = append(s.after, string([]byte(k)))
	}
}

// An operation's keys are reused only once its access ended and no store
// call holds them: a call whose rows were all settled, its operation's
// other rows cancelled, still reads its keys as they were after another
// operation was admitted, and the keys go back once the call returned.
func TestKeysAreReusedOnlyOnceNoCallHoldsThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newLingering()
		d, reg, err := newRigWith(s, Options{Workers: 1, CallRows: 1, ReuseKeys: true})
		require.NoError(t, err)
		aOp, err := d.Put(rows("a1", "a2"), nil)
		require.NoError(t, err)
		a := aOp.(*operation)
		<-s.settled
		a.Cancel()
		require.Equal(t, contract.Ended, a.Poll(nil).Access, "every row final: access ended while the call runs")
		d.mu.Lock()
		assert.NotNil(t, a.rk, "a call still holds the keys")
		assert.Empty(t, d.spare)
		d.mu.Unlock()

		b, err := d.Get(rows("b1", "b2"), nil, nil) // its keys built now, the length of a's
		require.NoError(t, err)
		close(s.release)
		synctest.Wait()
		assert.Equal(t, []string{"a1"}, s.after, "the call's keys as they were, another operation admitted meanwhile")
		d.mu.Lock()
		assert.Nil(t, a.rk, "given back once the call returned")
		assert.Nil(t, a.keys)
		assert.Len(t, d.spare, 2, "a's and b's")
		d.mu.Unlock()
		assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Ready, contract.Cancelled}, Access: contract.Ended}, a.Poll(nil),
			"statuses that differ stay the operation's")
		assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Ready, contract.Ready}, Access: contract.Ended}, b.Poll(nil),
			"statuses that agree read the same once given back")
		require.True(t, d.Drain(t.Context()))
		require.NoError(t, d.Unregister(reg))
	})
}

// unproving is a store that ends every row Ready but Unprovable.
type unproving struct{}

func (unproving) Transfer(c *Call) {
	for i := range c.Keys {
		c.Ends[i] = End{Status: contract.Ready, Unprovable: true}
	}
}

// The keys of an operation whose access is Unprovable are never reused:
// the store may still read them.
func TestUnprovableKeysAreNeverReused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, _, err := newRigWith(unproving{}, Options{Workers: 1, ReuseKeys: true})
		require.NoError(t, err)
		uOp, err := d.Put(rows("u1", "u2"), nil)
		require.NoError(t, err)
		synctest.Wait()
		u := uOp.(*operation)
		require.Equal(t, contract.Unprovable, u.Poll(nil).Access)
		d.mu.Lock()
		assert.NotNil(t, u.rk, "kept for good")
		assert.Empty(t, d.spare)
		held := slices.Clone(u.keys)
		d.mu.Unlock()
		_, err = d.Get(rows("v1", "v2"), nil, nil)
		require.NoError(t, err)
		synctest.Wait()
		for i, k := range held {
			assert.Equal(t, []string{"u1", "u2"}[i], string([]byte(k)), "as built")
		}
	})
}
