package drivekit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// looking is a holding store that can look: every key it is asked
// about is Present. When lookGate is set, each Look waits for one
// receive from it (or its close); blocks is its LookBlocks. It counts
// its Look calls.
type looking struct {
	*holding
	blocks   bool
	lookGate chan struct{}

	lookMu sync.Mutex
	looks  int
}

func (l *looking) Look(_ context.Context, keys [][]byte, dst []contract.Presence) []contract.Presence {
	l.lookMu.Lock()
	l.looks++
	l.lookMu.Unlock()
	if l.lookGate != nil {
		<-l.lookGate
	}
	for range keys {
		dst = append(dst, contract.Present)
	}
	return dst
}

func (l *looking) LookBlocks() bool { return l.blocks }

// lookCalls returns the Look calls so far.
func (l *looking) lookCalls() int {
	l.lookMu.Lock()
	defer l.lookMu.Unlock()
	return l.looks
}

// names is a lookup batch of names that are their own keys.
func names(ns ...string) contract.LookupBatch {
	b := contract.LookupBatch{Keys: plainKeys{}}
	for _, n := range ns {
		b.Names = append(b.Names, []byte(n))
	}
	return b
}

// each is n times p.
func each(p contract.Presence, n int) []contract.Presence {
	out := make([]contract.Presence, n)
	for i := range out {
		out[i] = p
	}
	return out
}

// With LookupsInStore reached, by a lookup waiting in the store or one
// abandoned at its context's end that the store still holds, a further
// lookup answers Unknown for every name at once without asking the
// store, counted in LookupsRefused; once the store answers, lookups are
// asked again.
func TestALookupPastLookupsInStoreIsAnsweredUnknown(t *testing.T) {
	for _, abandon := range []bool{false, true} {
		t.Run(fmt.Sprintf("abandoned %v", abandon), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := &looking{holding: newHolding(&verdicts{}, false), blocks: true, lookGate: make(chan struct{})}
				d, reg, err := newRigWith(l, Options{Workers: 1, LookupsInStore: 1})
				require.NoError(t, err)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				first := make(chan []contract.Presence, 1)
				go func() {
					got, err := d.Lookup(ctx, names("x", "y"), nil)
					assert.NoError(t, err)
					first <- got
				}()
				synctest.Wait() // the first lookup is inside the store
				if abandon {
					cancel()
					assert.Equal(t, each(contract.Unknown, 2), <-first, "abandoned")
				}
				assert.Equal(t, int64(1), d.Stats().LookupsInStore)

				// A bound not kept would let this one wait for the store:
				// its context ends then, and the Look count tells.
				bounded, stop := context.WithTimeout(context.Background(), time.Minute)
				defer stop()
				got, err := d.Lookup(bounded, names("x", "y", "z"), nil)
				require.NoError(t, err)
				assert.Equal(t, each(contract.Unknown, 3), got)
				assert.Equal(t, 1, l.lookCalls(), "a refused lookup asks the store nothing")
				assert.Equal(t, int64(1), d.Stats().LookupsRefused)

				l.lookGate <- struct{}{}
				synctest.Wait()
				if !abandon {
					assert.Equal(t, each(contract.Present, 2), <-first)
				}
				assert.Zero(t, d.Stats().LookupsInStore)
				close(l.lookGate)
				got, err = d.Lookup(context.Background(), names("z"), nil)
				require.NoError(t, err)
				assert.Equal(t, each(contract.Present, 1), got)
				assert.Equal(t, 2, l.lookCalls())
				assert.Equal(t, int64(1), d.Stats().LookupsRefused)
				teardown(t, d, reg)
			})
		})
	}
}

// A lookup whose every key a put of this driver writes, or has queued,
// is answered InFlight without asking the store; one key that no put
// writes and the store is asked.
func TestALookupOfKeysThisDriverPutsAsksNoStore(t *testing.T) {
	for _, writing := range []bool{false, true} {
		t.Run(fmt.Sprintf("writing %v", writing), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := &looking{holding: newHolding(&verdicts{}, writing)}
				d, reg, err := newRigWith(l, Options{Workers: 1, CallRows: 2})
				require.NoError(t, err)
				resume := func() {}
				if !writing {
					resume = d.Pause()
				}
				op, err := d.Put(rows("a", "b"), nil)
				require.NoError(t, err)
				synctest.Wait() // queued, or in the store
				for _, tt := range []struct {
					batch contract.LookupBatch
					want  []contract.Presence
					looks int
				}{
					{names("a", "b"), each(contract.InFlight, 2), 0},
					{names("b"), each(contract.InFlight, 1), 0},
					{names("a", "c"), []contract.Presence{contract.InFlight, contract.Present}, 1},
				} {
					got, err := d.Lookup(context.Background(), tt.batch, nil)
					require.NoError(t, err)
					assert.Equal(t, tt.want, got, "%q", tt.batch.Names)
					assert.Equal(t, tt.looks, l.lookCalls(), "%q", tt.batch.Names)
				}
				resume()
				if writing {
					l.gate <- struct{}{}
				}
				assert.Equal(t, contract.Ended, settle(op).Access)
				got, err := d.Lookup(context.Background(), names("a", "b"), nil)
				require.NoError(t, err)
				assert.Equal(t, each(contract.Present, 2), got, "the put is done")
				assert.Equal(t, 2, l.lookCalls())
				teardown(t, d, reg)
			})
		})
	}
}

// errNUL is what the picky store answers for a key with a NUL byte.
var errNUL = errors.New("a key with a NUL byte")

// picky is a looking store that cannot hold a key with a NUL byte.
type picky struct{ *looking }

func (picky) CheckKey(key string) error {
	if strings.IndexByte(key, 0) >= 0 {
		return errNUL
	}
	return nil
}

// A store's KeyChecker refuses a put, a get or a lookup with a key it
// cannot hold: the error wraps ErrDriverRejected, names the row and
// says the store's error (a put's and a get's wrap it); nothing is
// recorded and the store is not called.
func TestAKeyTheStoreCannotHoldIsRefused(t *testing.T) {
	for _, tt := range []struct {
		name string
		call func(d *Driver) error
		row  string
	}{
		{"put", func(d *Driver) error { _, err := d.Put(rows("a", "b\x00"), nil); return err }, "row 1"},
		{"get", func(d *Driver) error { _, err := d.Get(rows("\x00", "b"), nil, nil); return err }, "row 0"},
		{"lookup", func(d *Driver) error {
			_, err := d.Lookup(context.Background(), names("a", "b", "c\x00"), nil)
			return err
		}, "name 2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := picky{&looking{holding: newHolding(&verdicts{}, false)}}
				d, reg, err := newRigWith(p, Options{Workers: 1})
				require.NoError(t, err)
				before := d.Stats()
				err = tt.call(d)
				require.ErrorIs(t, err, contract.ErrDriverRejected)
				assert.Contains(t, err.Error(), tt.row)
				assert.Contains(t, err.Error(), errNUL.Error())
				assert.ErrorIs(t, err, errNUL, "the store's error is wrapped")
				synctest.Wait()
				assert.Equal(t, before, d.Stats(), "nothing recorded")
				assert.Empty(t, p.callKeys(), "no store call")
				assert.Zero(t, p.lookCalls(), "no lookup asked")
				assert.Zero(t, d.Live())
				teardown(t, d, reg)
			})
		})
	}
}
