package drivekit

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// settle waits, inside a bubble, until every goroutine of the driver is
// durably blocked or gone, and polls op.
func settle(op contract.Operation) contract.OpState {
	synctest.Wait()
	return op.Poll(nil)
}

// teardown drains d, revokes reg and closes d, each of which must
// succeed.
func teardown(t *testing.T, d *Driver, reg contract.Registration) {
	t.Helper()
	require.True(t, d.Drain(context.Background()))
	require.NoError(t, d.Unregister(reg))
	require.NoError(t, d.Close())
}

// A batch is cut into store calls of at most CallRows rows, in batch
// order, each row settled with the verdict its call gave it.
func TestABatchIsCutIntoCallsOfAtMostCallRows(t *testing.T) {
	for _, tt := range []struct {
		callRows int
		want     [][]string
	}{
		{0, [][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}}},
		{2, [][]string{{"a", "b"}, {"c", "d"}, {"e"}}},
		{5, [][]string{{"a", "b", "c", "d", "e"}}},
		{8, [][]string{{"a", "b", "c", "d", "e"}}},
	} {
		synctest.Test(t, func(t *testing.T) {
			v := &verdicts{status: map[string]contract.RowStatus{"c": contract.Miss}}
			d, reg, err := newRigWith(v, Options{Workers: 1, CallRows: tt.callRows})
			require.NoError(t, err)
			op, err := d.Get(rows("a", "b", "c", "d", "e"), nil, nil)
			require.NoError(t, err)
			st := settle(op)
			assert.Equal(t, tt.want, v.callKeys(), "CallRows %d", tt.callRows)
			assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Ready, contract.Miss, contract.Ready, contract.Ready}, st.Rows)
			assert.Equal(t, contract.Ended, st.Access)
			assert.Equal(t, int64(len(tt.want)), d.Stats().Calls)
			teardown(t, d, reg)
		})
	}
}

// A status the store leaves not final is recorded Fault: a row is never
// settled Pending.
func TestAStatusLeftPendingIsAFault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := &verdicts{status: map[string]contract.RowStatus{"k": contract.Pending}}
		d, reg, err := newRig(v)
		require.NoError(t, err)
		op, err := d.Put(oneRow(rigRegion.Slot(0)), nil)
		require.NoError(t, err)
		assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Fault}, Access: contract.Ended}, settle(op))
		assert.Equal(t, int64(1), d.Stats().PutRows[contract.Fault])
		teardown(t, d, reg)
	})
}

// A panic in the store ends every row of its call Fault, and every row
// of the operation no worker took, and is counted.
func TestAPanicInTheStoreFaultsTheCallAndTheRowsNotTaken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := &verdicts{crash: true}
		d, reg, err := newRigWith(v, Options{Workers: 1, CallRows: 2})
		require.NoError(t, err)
		op, err := d.Put(rows("a", "b", "c", "d"), nil)
		require.NoError(t, err)
		st := settle(op)
		assert.Equal(t, []contract.RowStatus{contract.Fault, contract.Fault, contract.Fault, contract.Fault}, st.Rows)
		assert.Equal(t, contract.Ended, st.Access)
		assert.Equal(t, [][]string{{"a", "b"}}, v.callKeys(), "the rows no worker took never reached the store")
		assert.Equal(t, int64(1), d.Stats().Panics)
		teardown(t, d, reg)
	})
}

// An unprovable row makes access Unprovable; over a store that cannot
// tear down, Recycle is refused and changes nothing; over one that can,
// it ends the access and calls back; a failed teardown changes nothing.
func TestRecycleEndsUnprovableAccessOnlyByATeardown(t *testing.T) {
	errTorn := errors.New("the client would not go")
	for _, tt := range []struct {
		name     string
		teardown bool
		err      error
		ended    bool
	}{
		{"no teardown", false, nil, false},
		{"a failed teardown", true, errTorn, false},
		{"a teardown", true, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				v := &verdicts{unprovable: map[string]bool{"k": true}}
				var s Store = v
				tr := &tearing{verdicts: v, err: tt.err}
				if tt.teardown {
					s = tr
				}
				d, reg, err := newRig(s)
				require.NoError(t, err)
				calls := 0
				op, err := d.Get(oneRow(rigRegion.Slot(0)), nil, func() { calls++ })
				require.NoError(t, err)
				require.Equal(t, contract.Unprovable, settle(op).Access)
				require.ErrorIs(t, d.Unregister(reg), ErrRegionBusy, "an unprovable operation pins its region")
				require.False(t, d.Drain(context.Background()))
				calls = 0

				err = d.Recycle(context.Background())
				if !tt.ended {
					require.ErrorIs(t, err, contract.ErrDriverRejected)
					assert.Equal(t, contract.Unprovable, op.Poll(nil).Access, "no access changes")
					assert.Zero(t, calls)
					assert.Equal(t, 1, d.Unprovable())
					return // the region stays lent, for good
				}
				require.NoError(t, err)
				assert.Equal(t, 1, tr.teardowns)
				assert.Equal(t, contract.Ended, op.Poll(nil).Access)
				assert.Equal(t, 1, calls, "the callback follows the change")
				assert.Equal(t, Stats{GetOps: 1, GetRows: statusCount(contract.Fault, 1), Parts: 1, Calls: 1, Recycles: 1, OpsRecycled: 1, RowsRecycled: 1}, d.Stats())
				teardown(t, d, reg)
			})
		})
	}
}

// statusCount is a row count of n rows of status st.
func statusCount(st contract.RowStatus, n int64) (c [contract.RowStatusCount]int64) {
	c[st] = n
	return c
}

// A teardown that leaves no fresh resources ends every access and
// closes the driver: the error wraps ErrRecycledClosed, later calls are
// refused, every handle is revoked, Drain answers true and Close
// succeeds.
func TestATeardownWithoutFreshResourcesClosesTheDriver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := &verdicts{unprovable: map[string]bool{"k": true}}
		d, reg, err := newRig(&tearing{verdicts: v, err: contract.ErrRecycledClosed})
		require.NoError(t, err)
		op, err := d.Get(oneRow(rigRegion.Slot(0)), nil, nil)
		require.NoError(t, err)
		require.Equal(t, contract.Unprovable, settle(op).Access)

		require.ErrorIs(t, d.Recycle(context.Background()), contract.ErrRecycledClosed)
		assert.Equal(t, contract.Ended, op.Poll(nil).Access)
		_, err = d.Put(oneRow(rigRegion.Slot(1)), nil)
		assert.ErrorIs(t, err, contract.ErrDriverRejected)
		_, err = d.Register(rigRegion)
		assert.ErrorIs(t, err, contract.ErrDriverRejected)
		assert.Empty(t, d.Regions())
		assert.NoError(t, d.Unregister(reg))
		assert.True(t, d.Drain(context.Background()))
		assert.NoError(t, d.Close())
	})
}

// keeper is a verdicts store that must know its regions: Keep answers
// err, and Release counts the tokens it gets back.
type keeper struct {
	*verdicts
	err      error
	released []any
}

func (k *keeper) Keep([]contract.SlotRegion, bool) (any, error) { return "token", k.err }
func (k *keeper) Release(_ []contract.SlotRegion, token any)    { k.released = append(k.released, token) }

// A registration the store refuses registers nothing; one that may be
// live gets a handle, in the error, that must be revoked; the store gets
// its token back once, at the revocation.
func TestTheStoreDecidesWhatARegistrationFailureLeaves(t *testing.T) {
	errLost := errors.New("the answer was lost")
	for _, tt := range []struct {
		name string
		err  error
		live bool
	}{
		{"refused", errLost, false},
		{"refused, no handle", &contract.RegistrationError{Err: errLost}, false},
		{"may be live", &contract.RegistrationError{Registration: 7, Err: errLost}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := &keeper{verdicts: &verdicts{}, err: tt.err}
			d := New(k, Options{Name: "rig"})
			reg, err := d.Register(rigRegion)
			require.ErrorIs(t, err, errLost)
			assert.Zero(t, reg)
			var re *contract.RegistrationError
			if !tt.live {
				assert.Empty(t, d.Regions())
				assert.False(t, errors.As(err, &re) && re.Registration != 0)
				return
			}
			require.ErrorAs(t, err, &re)
			assert.Equal(t, contract.Registration(1), re.Registration, "the kit's handle, not the store's")
			assert.Len(t, d.Regions(), 1)
			assert.Empty(t, k.released)
			require.NoError(t, d.Unregister(re.Registration))
			require.NoError(t, d.Unregister(re.Registration), "revoked already")
			assert.Equal(t, []any{"token"}, k.released)
		})
	}
}

// A store that cannot look has every lookup refused, asking nothing.
func TestALookupOfAStoreThatCannotLookIsRefused(t *testing.T) {
	d := New(&verdicts{}, Options{Name: "rig"})
	got, err := d.Lookup(context.Background(), contract.LookupBatch{Keys: plainKeys{}, Names: [][]byte{[]byte("k")}}, nil)
	assert.ErrorIs(t, err, contract.ErrDriverRejected)
	assert.Empty(t, got)
	assert.Zero(t, d.Stats().Lookups)
}
