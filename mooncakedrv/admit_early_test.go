package mooncakedrv

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

// gatedKeys is a key maker (not a keys.Stem, so admission makes its
// first pass over every key) that, from its n-th AppendKey call on,
// waits for open to close before answering; with nul set, answers from
// then on carry a NUL byte.
type gatedKeys struct {
	stem  keys.Stem
	calls atomic.Int64
	n     int64
	open  chan struct{}
	nul   bool
}

func (k *gatedKeys) AppendKey(dst, name []byte) []byte {
	if k.calls.Add(1) >= k.n {
		<-k.open
		if k.nul {
			return append(k.stem.AppendKey(dst, name), 0)
		}
	}
	return k.stem.AppendKey(dst, name)
}

func (k *gatedKeys) KeyLen(n int) int { return k.stem.KeyLen(n) }

// admitting starts a get or put of rows rows (RowsPerCall 4, so several
// parts) whose key maker stops answering while the third part's keys are
// built, after the first pass over every key; it returns the driver, the
// key maker and a channel that yields the operation once the call
// returns.
func admitting(t *testing.T, dir contract.Direction, rows int, nul bool) (*rig, *gatedKeys, <-chan contract.Operation) {
	t.Helper()
	r := newRig(t, fakesdk.Options{}, Config{Workers: 2, RowsPerCall: 4})
	names := make([]string, rows)
	for i := range names {
		names[i] = fmt.Sprintf("early-%d", i)
		if dir == contract.GetDir {
			_, err := r.store.Seed(r.key(names[i]), pattern(byte(i), slotBytes))
			require.NoError(t, err)
		}
	}
	km := &gatedKeys{stem: r.stem, n: int64(rows + 2*4 + 1), open: make(chan struct{}), nul: nul}
	b := r.batch(names, seqSlots(rows)...)
	b.Keys = km
	ops := make(chan contract.Operation, 1)
	go func() {
		var op contract.Operation
		var err error
		if dir == contract.PutDir {
			op, err = r.drv.Put(b, nil)
		} else {
			op, err = r.drv.Get(b, nil, nil)
		}
		assert.NoError(t, err)
		ops <- op
	}()
	return r, km, ops
}

func seqSlots(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// waitStoreCalls waits (bounded) until the fake store saw at least n data
// calls in dir.
func waitStoreCalls(t *testing.T, s *fakesdk.Store, dir contract.Direction, n int) {
	t.Helper()
	eventually(t, func() bool {
		c := s.Calls()
		got := c.Get
		if dir == contract.PutDir {
			got = c.Put
		}
		return got >= n
	}, "the store seeing %d %v calls", n, dir)
}

// The first parts reach the store while the call is still building the
// keys of the later ones; once it returns, every row ends as it would
// have.
func TestTheFirstPartRunsBeforeTheRestIsAdmitted(t *testing.T) {
	for _, dir := range []contract.Direction{contract.GetDir, contract.PutDir} {
		t.Run(dir.String(), func(t *testing.T) {
			r, km, ops := admitting(t, dir, 16, false)
			waitStoreCalls(t, r.store, dir, 2)
			select {
			case <-ops:
				t.Fatal("the call returned before its third part's keys were built")
			default:
			}
			close(km.open)
			op := <-ops
			st := ended(t, op)
			assert.Equal(t, contract.Ended, st.Access)
			for i, s := range st.Rows {
				assert.Equal(t, contract.Ready, s, "row %d", i)
			}
		})
	}
}

// A Cancel that comes while the call still builds its later parts ends
// those parts Cancelled without an SDK call; the parts queued before it
// end as Cancel leaves them (run, or Cancelled if no worker took them).
func TestCancelDuringAdmissionCancelsThePartsNotYetQueued(t *testing.T) {
	r, km, ops := admitting(t, contract.GetDir, 16, false)
	waitStoreCalls(t, r.store, contract.GetDir, 2)
	// The operation is not returned yet; Cancel needs it, so let the
	// call go on with the gate open only after Cancel was recorded, by
	// cancelling from the first callback's operation: the driver's open
	// set holds it.
	r.drv.mu.Lock()
	var op *operation
	for o := range r.drv.open {
		op = o
	}
	r.drv.mu.Unlock()
	require.NotNil(t, op)
	op.Cancel()
	close(km.open)
	got := <-ops
	st := ended(t, got)
	assert.Equal(t, contract.Ended, st.Access)
	for i := 8; i < 16; i++ {
		assert.Equal(t, contract.Cancelled, st.Rows[i], "row %d, of a part built after Cancel", i)
	}
	assert.LessOrEqual(t, r.store.Calls().Get, 2, "no part built after Cancel reached the store")
}

// A Drain that comes while the call still builds its later parts: they
// end Cancelled, and the Drain returns true once the queued parts ran.
func TestDrainDuringAdmissionCancelsThePartsNotYetQueued(t *testing.T) {
	r, km, ops := admitting(t, contract.GetDir, 16, false)
	waitStoreCalls(t, r.store, contract.GetDir, 2)
	drained := make(chan bool, 1)
	go func() { drained <- r.drv.Drain(t.Context()) }()
	eventually(t, func() bool {
		r.drv.mu.Lock()
		defer r.drv.mu.Unlock()
		return r.drv.draining
	}, "the Drain under way")
	close(km.open)
	st := ended(t, <-ops)
	assert.True(t, <-drained)
	assert.Equal(t, contract.Ended, st.Access)
	for i := 8; i < 16; i++ {
		assert.Equal(t, contract.Cancelled, st.Rows[i], "row %d, of a part built after Drain", i)
	}
}

// A key maker whose keys change after the admission's first pass (here:
// a NUL byte appears): the part whose keys are refused makes no SDK call
// and its rows end Fault; the parts before it end as they would have.
func TestAKeyRefusedAfterAdmissionFailsItsPartOnly(t *testing.T) {
	r, km, ops := admitting(t, contract.GetDir, 16, true)
	waitStoreCalls(t, r.store, contract.GetDir, 2)
	close(km.open)
	st := ended(t, <-ops)
	assert.Equal(t, contract.Ended, st.Access)
	for i := range 8 {
		assert.Equal(t, contract.Ready, st.Rows[i], "row %d, of a part built before the key maker changed", i)
	}
	for i := 8; i < 16; i++ {
		assert.Equal(t, contract.Fault, st.Rows[i], "row %d, of a part whose keys were refused", i)
	}
	assert.Equal(t, 2, r.store.Calls().Get, "the refused parts made no SDK call")
}

// A key that holds a NUL byte at admission refuses the whole call,
// whatever part it lies in, and nothing reaches the store.
func TestANulKeyRefusesTheWholeCall(t *testing.T) {
	r := newRig(t, fakesdk.Options{}, Config{RowsPerCall: 4})
	names := make([]string, 16)
	for i := range names {
		names[i] = fmt.Sprintf("nul-%d", i)
	}
	b := r.batch(names, seqSlots(16)...)
	b.Keys = &gatedKeys{stem: r.stem, n: 15, open: closedChan(), nul: true}
	_, err := r.drv.Get(b, nil, nil)
	require.ErrorIs(t, err, contract.ErrDriverRejected)
	assert.Contains(t, err.Error(), "row 14")
	assert.Zero(t, r.store.Calls().Get)
	assert.Zero(t, r.drv.Stats().Ops)
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// ended polls op (bounded) until its access leaves Open.
func ended(t *testing.T, op contract.Operation) contract.OpState {
	t.Helper()
	var st contract.OpState
	eventually(t, func() bool {
		st = op.Poll(nil)
		return st.Access != contract.Open
	}, "the operation ending")
	return st
}
