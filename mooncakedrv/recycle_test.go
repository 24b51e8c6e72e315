package mooncakedrv

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

// recycleRig is a rig whose Config.Reopen opens another client of the
// same fake store (counting them), and a get of "u" into slot 4 that
// answered -800 with its transfer still running at the gate returned.
func recycleRig(t *testing.T, reopen bool) (*rig, *fakesdk.Gate, contract.Operation, *int) {
	t.Helper()
	opened := new(int)
	var cfg Config
	r := newRig(t, fakesdk.Options{TransferTimeout: -1}, cfg)
	if reopen {
		r.drv.store.reopen = func(context.Context) (mooncakesdk.Client, error) {
			*opened++
			return r.store.Client(), nil
		}
	}
	_, err := r.store.Seed(r.key("u"), pattern(9, slotBytes))
	require.NoError(t, err)
	running := fakesdk.NewGate()
	require.NoError(t, r.store.Script(fakesdk.Fault{Op: fakesdk.Get, Key: r.key("u"), Code: mooncakesdk.TransferFail, Running: running}))
	onChange, changed := notify()
	op, err := r.drv.Get(r.batch([]string{"u"}, 4), nil, onChange)
	require.NoError(t, err)
	st := settle(t, op, changed)
	require.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Fault}, Access: contract.Unprovable}, st)
	<-running.Reached()
	return r, running, op, opened
}

func TestRecycleDestroysTheClientAndEndsUnprovableAccess(t *testing.T) {
	r, running, op, opened := recycleRig(t, true)
	clear(r.mem.slot(4))
	require.NoError(t, r.drv.Recycle(t.Context()))
	assert.Equal(t, contract.Ended, op.Poll(nil).Access)
	assert.Zero(t, r.store.Running(), "the destroy ended the transfer that was still running")
	running.Open()
	running.Wait()
	assert.Equal(t, make([]byte, slotBytes), r.mem.slot(4), "and it wrote nothing")
	assert.Equal(t, 1, r.store.Calls().Destroy)
	assert.Equal(t, 1, *opened, "a fresh client")
	assert.Equal(t, 2, r.store.Calls().Register, "the region registered with the fresh client too")

	s := r.drv.Stats()
	assert.EqualValues(t, 1, s.Recycles)
	assert.EqualValues(t, 1, s.OpsRecycled)
	assert.EqualValues(t, 1, s.RowsRecycled)
	assert.Zero(t, s.OpsUnprovable)
	assert.Zero(t, s.RowsUnprovable)

	// The fresh client serves the same handle.
	r.mem.fill(0, 3)
	assert.Equal(t, contract.Ready, r.put([]string{"fresh"}, 0).Rows[0])
	assert.Equal(t, contract.Ready, r.get([]string{"fresh"}, 1).Rows[0])
	assert.Equal(t, pattern(3, slotBytes), r.mem.slot(1))
	closeDriver(t, r.drv, r.reg)
}

func TestRecycleWithoutReopenClosesTheDriver(t *testing.T) {
	r, _, op, _ := recycleRig(t, false)
	err := r.drv.Recycle(t.Context())
	require.ErrorIs(t, err, contract.ErrRecycledClosed)
	assert.Contains(t, err.Error(), "no Reopen")
	assert.Equal(t, contract.Ended, op.Poll(nil).Access, "every access ended all the same")
	_, err = r.drv.Get(r.batch([]string{"x"}, 0), nil, nil)
	assert.ErrorIs(t, err, contract.ErrDriverRejected, "no client: every call refused")
	assert.ErrorIs(t, r.drv.Recycle(t.Context()), contract.ErrDriverRejected)
	require.NoError(t, r.drv.Unregister(r.reg), "nothing is registered any more")
	require.True(t, r.drv.Drain(t.Context()))
	require.NoError(t, r.drv.Close())
	assert.Equal(t, 1, r.store.Calls().Destroy, "destroyed once, by the Recycle")
}

func TestRecycleWhoseFreshClientFailsClosesTheDriver(t *testing.T) {
	for name, fresh := range map[string]func(r *rig) (mooncakesdk.Client, error){
		"open fails": func(*rig) (mooncakesdk.Client, error) { return nil, errors.New("no master") },
		"register fails": func(r *rig) (mooncakesdk.Client, error) {
			require.NoError(t, r.store.Script(fakesdk.Fault{Op: fakesdk.Register, Code: mooncakesdk.InvalidParams}))
			return r.store.Client(), nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			r, _, op, _ := recycleRig(t, false)
			r.drv.store.reopen = func(context.Context) (mooncakesdk.Client, error) { return fresh(r) }
			err := r.drv.Recycle(t.Context())
			require.ErrorIs(t, err, contract.ErrRecycledClosed)
			assert.Equal(t, contract.Ended, op.Poll(nil).Access)
			require.NoError(t, r.drv.Unregister(r.reg))
			require.True(t, r.drv.Drain(t.Context()))
			require.NoError(t, r.drv.Close())
		})
	}
}

func TestRecycleWaitsForCallsInsideTheStore(t *testing.T) {
	r, _, unprovable, opened := recycleRig(t, true)
	gate := fakesdk.NewGate()
	require.NoError(t, r.store.Script(fakesdk.Fault{Op: fakesdk.Put, Hold: gate, Times: 1}))
	r.mem.fill(0, 5)
	onChange, changed := notify()
	held, err := r.drv.Put(r.batch([]string{"held"}, 0), onChange)
	require.NoError(t, err)
	<-gate.Reached()

	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond) // an input: Recycle must give up
	defer cancel()
	err = r.drv.Recycle(ctx)
	require.ErrorIs(t, err, contract.ErrDriverRejected)
	assert.Contains(t, err.Error(), "nothing torn down")
	assert.Zero(t, r.store.Calls().Destroy)
	assert.Zero(t, *opened)
	assert.Equal(t, contract.Unprovable, unprovable.Poll(nil).Access, "nothing changed")

	done := make(chan error, 1)
	go func() { done <- r.drv.Recycle(t.Context()) }()
	eventually(t, func() bool {
		_, err := r.drv.Get(r.batch([]string{"x"}, 1), nil, nil)
		return err != nil
	}, "a Recycle under way refusing work")
	_, err = r.drv.Put(r.batch([]string{"x"}, 1), nil)
	assert.ErrorIs(t, err, contract.ErrDriverRejected)
	assert.ErrorIs(t, r.drv.Unregister(r.reg), contract.ErrDriverRejected)
	gate.Open()
	require.NoError(t, <-done)
	assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Ready}, Access: contract.Ended}, settle(t, held, changed), "the held put kept its own verdict")
	assert.Equal(t, contract.Ended, unprovable.Poll(nil).Access)
	closeDriver(t, r.drv, r.reg)
}

// A Recycle that gives up says what it did before it waited: the rows no
// worker had taken ended Cancelled (their operation's access Ended),
// nothing was destroyed and no Unprovable access changed.
func TestRecycleThatGivesUpSaysWhatItCancelled(t *testing.T) {
	r, _, unprovable, _ := recycleRig(t, true)
	gate := fakesdk.NewGate()
	require.NoError(t, r.store.Script(fakesdk.Fault{Op: fakesdk.Put, Hold: gate, Times: 1}))
	r.mem.fill(0, 5)
	onChange, changed := notify()
	held, err := r.drv.Put(r.batch([]string{"held"}, 0), onChange)
	require.NoError(t, err)
	<-gate.Reached()
	resume := r.drv.Pause()
	queued, err := r.drv.Put(r.batch([]string{"queued-0", "queued-1"}, 1, 2), nil)
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond) // an input: Recycle must give up
	defer cancel()
	err = r.drv.Recycle(ctx)
	resume()
	require.ErrorIs(t, err, contract.ErrDriverRejected)
	assert.Contains(t, err.Error(), "nothing torn down and no access changed; the 2 rows no worker had taken were ended Cancelled first")
	assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Cancelled, contract.Cancelled}, Access: contract.Ended}, queued.Poll(nil))
	assert.Zero(t, r.store.Calls().Destroy)
	assert.Equal(t, contract.Unprovable, unprovable.Poll(nil).Access)

	gate.Open()
	assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Ready}, Access: contract.Ended}, settle(t, held, changed))
	require.NoError(t, r.drv.Recycle(t.Context()))
	closeDriver(t, r.drv, r.reg)
}
