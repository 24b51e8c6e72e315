package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/patience"
)

// The tests of the guide's program do not run in parallel: each checks
// that hostmem.Totals is back where it started (every byte unmapped).

// engine is one engine's store client, as the program opens it, with a
// count of the drivers it opened and closed and a hook that sets one up.
type engine struct {
	store          *memdrv.Store
	setup          func(*memdrv.Driver)
	opened, closed atomic.Int32
	fail           error
	noLookup       bool // the driver is seen as a contract.Driver alone
}

type closing struct {
	*memdrv.Driver
	e *engine
}

func (c closing) Close() error {
	err := c.Driver.Close()
	if err == nil {
		c.e.closed.Add(1)
	}
	return err
}

func (e *engine) open(context.Context) (contract.Driver, error) {
	if e.fail != nil {
		return nil, e.fail
	}
	d := memdrv.New(e.store, memdrv.Options{})
	if e.setup != nil {
		e.setup(d)
	}
	e.opened.Add(1)
	if e.noLookup {
		return struct{ contract.Driver }{closing{Driver: d, e: e}}, nil
	}
	return closing{Driver: d, e: e}, nil
}

func bounded(t *testing.T) context.Context {
	ctx, cancel := patience.Bound{Span: patience.Wait(), What: "the guide's program", Logf: t.Logf}.Context(t.Context())
	t.Cleanup(cancel)
	return ctx
}

// key is the store key of one block, as the program's backend makes it.
func key(t *testing.T, layer, block int) string {
	stem, err := keys.NewStem("guide")
	require.NoError(t, err)
	k, err := stem.Key(fmt.Appendf(nil, "request-1/%d/%d", layer, block))
	require.NoError(t, err)
	return k
}

// givenBack checks that every driver opened was closed and every byte
// mapped was unmapped.
func givenBack(t *testing.T, before int64, engines ...*engine) {
	t.Helper()
	for i, e := range engines {
		assert.Equal(t, e.opened.Load(), e.closed.Load(), "engine %d: drivers opened and closed", i)
	}
	assert.Equal(t, before, hostmem.Totals().MappedNow, "every byte mapped is unmapped")
}

func TestTheProgramRoundTrips(t *testing.T) {
	for _, n := range []int{0, 1, 48, blocks} {
		t.Run(fmt.Sprint(n, " blocks published"), func(t *testing.T) {
			before := hostmem.Totals().MappedNow
			store := memdrv.NewStore()
			a, b := &engine{store: store}, &engine{store: store}
			require.NoError(t, run(bounded(t), a.open, b.open, n))
			assert.Equal(t, int64(layers*n), store.Stats().Objects, "a published its blocks, b none")
			givenBack(t, before, a, b)
		})
	}
}

func TestTheProgramMain(t *testing.T) {
	before := hostmem.Totals().MappedNow
	main()
	assert.Equal(t, before, hostmem.Totals().MappedNow)
}

// A block the lookup found but the fetch could not read is computed: no
// error, and the bytes before it are checked.
func TestABlockGoneByTheFetchIsComputed(t *testing.T) {
	before := hostmem.Totals().MappedNow
	store := memdrv.NewStore()
	a := &engine{store: store}
	b := &engine{store: store, setup: func(d *memdrv.Driver) { d.FailReads(key(t, 1, 20)) }}
	require.NoError(t, run(bounded(t), a.open, b.open, 48))
	givenBack(t, before, a, b)
}

// Every failure gives back what was opened, lent and mapped, and names
// what went wrong.
func TestTheProgramGivesEverythingBackOnFailure(t *testing.T) {
	refused := errors.New("no store at that address")
	for _, c := range []struct {
		name    string
		a, b    func(*engine)
		wantErr error
	}{
		{name: "the first engine's store cannot be reached", a: func(e *engine) { e.fail = refused }, wantErr: refused},
		{name: "the second engine's store cannot be reached", b: func(e *engine) { e.fail = refused }, wantErr: refused},
		{name: "the first engine's region is refused", a: func(e *engine) {
			e.setup = func(d *memdrv.Driver) { d.FailNextRegister(fmt.Errorf("%w: no room", contract.ErrDriverRejected)) }
		}, wantErr: contract.ErrConstructionRejected},
		{name: "every put crashes", a: func(e *engine) {
			e.setup = func(d *memdrv.Driver) { d.Crash(memdrv.PutDir) }
		}}, // every row Fault: the second engine computes every block
		{name: "the second engine's driver cannot look up", b: func(e *engine) { e.noLookup = true }, wantErr: binding.ErrNoLookup},
		{name: "the second engine's lookups go unanswered", b: func(e *engine) {
			e.setup = func(d *memdrv.Driver) { d.FailLookups(key(t, 0, 0)) } // Unknown: it computes every block
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := hostmem.Totals().MappedNow
			store := memdrv.NewStore()
			a, b := &engine{store: store}, &engine{store: store}
			for e, set := range map[*engine]func(*engine){a: c.a, b: c.b} {
				if set != nil {
					set(e)
				}
			}
			err := run(bounded(t), a.open, b.open, 48)
			if c.wantErr != nil {
				require.ErrorIs(t, err, c.wantErr)
			} else {
				require.NoError(t, err, "what the store does not hold is computed")
			}
			givenBack(t, before, a, b)
		})
	}
}
