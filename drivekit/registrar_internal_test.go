package drivekit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/rowbatch"
)

// revoking is a tearing store that registers regions through a
// Registrar: Keep and Revoke each wait for one receive from their gate
// when it is set, and Revoke answers revokeErr. It counts both calls.
type revoking struct {
	*tearing

	mu                   sync.Mutex
	keepGate, revokeGate chan struct{}
	revokeErr            error
	keeps, revokes       int
}

func newRevoking() *revoking { return &revoking{tearing: &tearing{verdicts: &verdicts{}}} }

func (r *revoking) Keep([]contract.SlotRegion, bool) (any, error) {
	r.mu.Lock()
	r.keeps++
	gate := r.keepGate
	r.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return "token", nil
}

func (r *revoking) Revoke([]contract.SlotRegion, any) error {
	r.mu.Lock()
	r.revokes++
	gate := r.revokeGate
	r.mu.Unlock()
	if gate != nil {
		<-gate
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.revokeErr
}

// gates sets the gates of the calls that follow (nil: none).
func (r *revoking) gates(keep, revoke chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keepGate, r.revokeGate = keep, revoke
}

// failRevoke sets what Revoke answers from now on.
func (r *revoking) failRevoke(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.revokeErr = err
}

// calls returns the Keep and Revoke calls so far.
func (r *revoking) calls() (keeps, revokes int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.keeps, r.revokes
}

// otherRegion is a second region of eight slots, apart from rigRegion.
var otherRegion = contract.SlotRegion{Base: 1 << 41, Len: 512, SlotBytes: 64, SlotCount: 8, Kind: contract.Host}

// inStore is a registration call held inside the store until gate
// closes: Keep of otherRegion, or Revoke of a handle of it. start
// returns once the call is held, the store's gates cleared for the
// calls that follow.
type inStore struct {
	name  string
	start func(t *testing.T, d *Driver, r *revoking, gate chan struct{}) (done chan error)
}

var registrationCalls = []inStore{
	{"keep", func(t *testing.T, d *Driver, r *revoking, gate chan struct{}) chan error {
		r.gates(gate, nil)
		done := make(chan error, 1)
		go func() {
			_, err := d.Register(otherRegion)
			done <- err
		}()
		synctest.Wait()
		r.gates(nil, nil)
		return done
	}},
	{"revoke", func(t *testing.T, d *Driver, r *revoking, gate chan struct{}) chan error {
		other, err := d.Register(otherRegion)
		require.NoError(t, err)
		r.gates(nil, gate)
		done := make(chan error, 1)
		go func() { done <- d.Unregister(other) }()
		synctest.Wait()
		r.gates(nil, nil)
		return done
	}},
}

// holdInStore makes a rig over a revoking store and holds call inside
// it until gate closes; done then receives the call's error.
func holdInStore(t *testing.T, call inStore) (d *Driver, reg contract.Registration, r *revoking, gate chan struct{}, done chan error) {
	t.Helper()
	r = newRevoking()
	d, reg, err := newRigWith(r, Options{Workers: 1})
	require.NoError(t, err)
	gate = make(chan struct{})
	return d, reg, r, gate, call.start(t, d, r, gate)
}

// closeAll drains d, revokes every handle it holds and closes it, each
// of which must succeed.
func closeAll(t *testing.T, d *Driver) {
	t.Helper()
	require.True(t, d.Drain(context.Background()))
	d.mu.Lock()
	var regs []contract.Registration
	for reg := range d.regions {
		regs = append(regs, reg)
	}
	d.mu.Unlock()
	for _, reg := range regs {
		require.NoError(t, d.Unregister(reg))
	}
	require.NoError(t, d.Close())
}

// Keep and Revoke run outside the kit's lock: while one is held in the
// store, another operation runs, and Stats and its Poll answer.
func TestKeepAndRevokeRunOutsideTheLock(t *testing.T) {
	for _, call := range registrationCalls {
		t.Run(call.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d, _, _, gate, done := holdInStore(t, call)
				if assert.True(t, d.mu.TryLock(), "the kit's lock is free while the store holds a %s", call.name) {
					d.mu.Unlock()
					op, err := d.Put(rows("a"), nil)
					require.NoError(t, err)
					assert.Equal(t, contract.Ended, settle(op).Access)
					assert.Equal(t, int64(1), d.Stats().PutOps)
				}
				close(gate)
				require.NoError(t, <-done)
				closeAll(t, d)
			})
		})
	}
}

// errRefused is what a refusing Revoke answers.
var errRefused = errors.New("the store refuses to revoke")

// A Revoke that fails leaves the region registered under its handle:
// Unregister's error wraps ErrDriverRejected and the store's error,
// rows into the region are still admitted, and a later Unregister
// revokes it.
func TestARevokeThatFailsLeavesTheRegionRegistered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRevoking()
		d, reg, err := newRigWith(r, Options{Workers: 1})
		require.NoError(t, err)
		r.failRevoke(errRefused)
		err = d.Unregister(reg)
		require.ErrorIs(t, err, contract.ErrDriverRejected)
		assert.ErrorIs(t, err, errRefused)
		assert.Equal(t, []contract.SlotRegion{rigRegion}, d.Regions())

		op, err := d.Put(rows("a"), nil)
		require.NoError(t, err, "a put into a region still registered")
		assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Ready}, Access: contract.Ended}, settle(op))

		r.failRevoke(nil)
		require.NoError(t, d.Unregister(reg))
		assert.Empty(t, d.Regions())
		require.NoError(t, d.Unregister(reg), "a handle revoked is revoked")
		_, revokes := r.calls()
		assert.Equal(t, 2, revokes)
		require.True(t, d.Drain(context.Background()))
		require.NoError(t, d.Close())
	})
}

// While a Revoke runs, its handle is neither revocable by another call
// nor usable: a second Unregister and a put into the region are
// refused. Whatever the Revoke answers, the handle is then revoked or
// registered again.
func TestWhileARevokeRunsItsHandleIsNeitherRevocableNorUsable(t *testing.T) {
	for _, tt := range []struct {
		name       string
		err        error
		registered bool
	}{
		{"revoked", nil, false},
		{"refused", errRefused, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRevoking()
				d, reg, err := newRigWith(r, Options{Workers: 1})
				require.NoError(t, err)
				r.failRevoke(tt.err)
				gate := make(chan struct{})
				r.gates(nil, gate)
				done := make(chan error, 1)
				go func() { done <- d.Unregister(reg) }()
				synctest.Wait()

				assert.ErrorIs(t, d.Unregister(reg), contract.ErrDriverRejected, "a second Unregister of the handle")
				_, err = d.Put(rows("a"), nil)
				assert.ErrorIs(t, err, rowbatch.ErrBadBatch, "a put into the region")
				assert.ErrorIs(t, err, contract.ErrDriverRejected)
				assert.Zero(t, d.Stats().PutOps)
				_, revokes := r.calls()
				assert.Equal(t, 1, revokes)

				close(gate)
				err = <-done
				if tt.err != nil {
					assert.ErrorIs(t, err, tt.err)
				} else {
					assert.NoError(t, err)
				}
				assert.Equal(t, tt.registered, len(d.Regions()) == 1)
				r.failRevoke(nil)
				closeAll(t, d)
			})
		})
	}
}

// Close is refused while a Keep or a Revoke runs, even after a Drain
// that returned true; Recycle waits for them: one whose context ends
// first is refused and tears nothing down, one that waits tears down
// once the store returns.
func TestCloseAndRecycleWaitForKeepAndRevoke(t *testing.T) {
	for _, call := range registrationCalls {
		t.Run(call.name+": close", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d, reg, _, gate, done := holdInStore(t, call)
				require.True(t, d.Drain(context.Background()))
				require.NoError(t, d.Unregister(reg))
				assert.ErrorIs(t, d.Close(), contract.ErrDriverRejected, "Close while the store holds a %s", call.name)
				close(gate)
				require.NoError(t, <-done)
				closeAll(t, d)
			})
		})
		t.Run(call.name+": recycle", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d, _, r, gate, done := holdInStore(t, call)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				err := d.Recycle(ctx)
				cancel()
				assert.ErrorIs(t, err, contract.ErrDriverRejected, "a Recycle whose context ends first")
				assert.Zero(t, r.teardowns, "nothing torn down")
				assert.Zero(t, d.Recycles())

				recycled := make(chan error, 1)
				go func() { recycled <- d.Recycle(context.Background()) }()
				synctest.Wait()
				select {
				case err := <-recycled:
					t.Fatalf("Recycle returned (%v) while the store holds a %s", err, call.name)
				default:
				}
				close(gate)
				require.NoError(t, <-done)
				require.NoError(t, <-recycled)
				assert.Equal(t, 1, r.teardowns)
				assert.Equal(t, 1, d.Recycles())
				closeAll(t, d)
			})
		})
	}
}

// closing is a verdicts store with a client to free: Close answers err
// and counts itself.
type closing struct {
	*verdicts
	err    error
	closes int
}

func (c *closing) Close() error {
	c.closes++
	return c.err
}

// errStuck is what a failing store Close answers.
var errStuck = errors.New("the client would not close")

// Close calls the store's Close once, from the first Close allowed:
// not from one refused, not again from a second Close (nil). Its error
// is Close's, and the driver is closed all the same.
func TestCloseClosesTheStoreOnce(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"closes", nil},
		{"fails", errStuck},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := &closing{verdicts: &verdicts{}, err: tt.err}
				d, reg, err := newRigWith(c, Options{Workers: 1})
				require.NoError(t, err)
				assert.ErrorIs(t, d.Close(), contract.ErrDriverRejected, "before a Drain")
				require.True(t, d.Drain(context.Background()))
				assert.ErrorIs(t, d.Close(), contract.ErrDriverRejected, "with a handle not revoked")
				assert.Zero(t, c.closes, "no store Close from a Close refused")
				require.NoError(t, d.Unregister(reg))

				err = d.Close()
				if tt.err != nil {
					assert.ErrorIs(t, err, tt.err)
				} else {
					assert.NoError(t, err)
				}
				assert.Equal(t, 1, c.closes)
				assert.NoError(t, d.Close(), "a closed driver")
				assert.Equal(t, 1, c.closes)
				err = d.Recycle(context.Background())
				assert.ErrorIs(t, err, contract.ErrDriverRejected, "the driver is closed")
				assert.ErrorContains(t, err, "closed")
			})
		})
	}
}

// revokingKeys is a key maker that, making its first key, revokes reg
// of d, when the kit's lock is free; it records what it found.
type revokingKeys struct {
	d        *Driver
	reg      contract.Registration
	made     bool
	lockFree bool
	err      error
}

func (k *revokingKeys) AppendKey(dst, name []byte) []byte {
	if !k.made {
		k.made = true
		if k.lockFree = k.d.mu.TryLock(); k.lockFree {
			k.d.mu.Unlock()
			k.err = k.d.Unregister(k.reg)
		}
	}
	return append(dst, name...)
}

func (*revokingKeys) KeyLen(n int) int { return n }

// A batch's keys are made outside the kit's lock, so a key maker may
// call the driver; a region it revokes meanwhile is checked again: the
// put is refused, nothing recorded.
func TestARegionRevokedWhileKeysAreMadeIsCheckedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRevoking()
		d, reg, err := newRigWith(r, Options{Workers: 1})
		require.NoError(t, err)
		keys := &revokingKeys{d: d, reg: reg}
		b := rows("a", "b")
		b.Keys = keys
		_, err = d.Put(b, nil)
		require.True(t, keys.lockFree, "the key maker runs outside the kit's lock")
		require.NoError(t, keys.err)
		assert.ErrorIs(t, err, contract.ErrDriverRejected)
		assert.ErrorIs(t, err, rowbatch.ErrBadBatch, "its region is gone")
		synctest.Wait()
		assert.Zero(t, d.Stats().PutOps)
		assert.Empty(t, r.callKeys())
		closeAll(t, d)
	})
}
