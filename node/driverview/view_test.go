package driverview_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/node/driverview"
)

// prefixKeys is a key maker: a fixed prefix, then the name (the tests'
// names are printable ASCII without NUL).
type prefixKeys string

func (p prefixKeys) AppendKey(dst, name []byte) []byte { return append(append(dst, p...), name...) }
func (p prefixKeys) KeyLen(n int) int                  { return len(p) + n }

const keys = prefixKeys("t/")

// lend is one view over the shared driver with memory of its own,
// registered through it.
type lend struct {
	t    *testing.T
	v    *driverview.View
	mem  *memdrv.Memory
	reg  contract.Registration
	name string
}

func newLend(t *testing.T, shared contract.Driver, name string) *lend {
	t.Helper()
	return lendOn(t, driverview.New(shared), name)
}

// lendOn is a lend of 8 slots of 64 bytes registered through v.
func lendOn(t *testing.T, v *driverview.View, name string) *lend {
	t.Helper()
	mem, err := memdrv.Alloc(64, 8, contract.Host)
	require.NoError(t, err)
	reg, err := v.Register(mem.Region)
	require.NoError(t, err)
	t.Cleanup(func() { _ = mem.Free() }) // refused, and kept, while a registration covers it
	return &lend{t: t, v: v, mem: mem, reg: reg, name: name}
}

// batch is a batch of one row per slot, named <lend>-<slot>.
func (l *lend) batch(slots ...int) contract.RowBatch {
	b := contract.RowBatch{Keys: keys}
	for _, s := range slots {
		b.Rows = append(b.Rows, contract.Row{Name: fmt.Appendf(nil, "%s-%d", l.name, s), Spans: []contract.Span{l.mem.Region.Slot(s)}})
	}
	return b
}

func (l *lend) key(slot int) string { return fmt.Sprintf("t/%s-%d", l.name, slot) }

// op is an admitted operation and the count of its onChange calls.
type op struct {
	contract.Operation
	calls atomic.Int32
}

// put puts the rows of slots through the lend's view; onChange polls
// from inside, as the binding does.
func (l *lend) put(slots ...int) *op {
	l.t.Helper()
	o := &op{}
	var ready atomic.Bool
	got, err := l.v.Put(l.batch(slots...), func() {
		o.calls.Add(1)
		if ready.Load() {
			o.Poll(nil)
		}
	})
	require.NoError(l.t, err)
	o.Operation = got
	ready.Store(true)
	return o
}

func (l *lend) get(slots ...int) *op {
	l.t.Helper()
	o := &op{}
	got, err := l.v.Get(l.batch(slots...), nil, func() { o.calls.Add(1) })
	require.NoError(l.t, err)
	o.Operation = got
	return o
}

// settled polls o (from the test's goroutine) until its access leaves
// Open: inside a synctest bubble, synctest.Wait is the wait.
func settled(t *testing.T, o contract.Operation) contract.OpState {
	t.Helper()
	synctest.Wait()
	st := o.Poll(nil)
	require.NotEqual(t, contract.Open, st.Access, "rows %v", st.Rows)
	return st
}

func endedCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// Drain of one view cancels that view's rows no worker took, and only
// its: another view's held row and its queued rows run on, and the
// first view's Drain neither waits for them nor calls the shared
// driver's Drain.
func TestDrainOfAViewLeavesAnotherViewsWorkAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := memdrv.New(memdrv.NewStore(), memdrv.Options{Workers: 1})
		a, b := newLend(t, d, "a"), newLend(t, d, "b")
		done := a.put(0)
		assert.Equal(t, []contract.RowStatus{contract.Ready}, settled(t, done).Rows)

		gate := d.HoldKeys(memdrv.PutDir, b.key(0))
		held := b.put(0)
		require.NoError(t, gate.Held(context.Background()))
		queuedB := b.put(1) // the one worker is at the gate: this waits
		queuedA := a.put(1)
		synctest.Wait()

		assert.True(t, a.v.Drain(context.Background()), "a's Drain waits for a's work only")
		assert.Equal(t, []contract.RowStatus{contract.Cancelled}, queuedA.Poll(nil).Rows, "a's queued row cancelled")
		assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Pending}, Access: contract.Open}, queuedB.Poll(nil), "b's queued row untouched")
		assert.Equal(t, contract.Open, held.Poll(nil).Access, "b's held row untouched")
		assert.Equal(t, 2, d.Live(), "b's two operations stay open in the shared driver")

		_, err := a.v.Put(a.batch(2), nil)
		require.ErrorIs(t, err, contract.ErrDriverRejected, "a drained takes no more work")
		more := b.put(2)

		gate.Release()
		for _, o := range []*op{held, queuedB, more} {
			assert.Equal(t, []contract.RowStatus{contract.Ready}, settled(t, o).Rows, "b's work runs on to its verdicts")
		}
		assert.True(t, b.v.Drain(context.Background()))
		assert.Positive(t, held.calls.Load())
	})
}

// Close of a view never closes the shared driver: it is refused until a
// Drain of the view answered true and its registrations are revoked, and
// then the shared driver serves other views as before, and its owner
// drains and closes it last.
func TestCloseOfAViewLeavesTheSharedDriverWorking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memdrv.NewStore()
		d := memdrv.New(store, memdrv.Options{})
		a, b := newLend(t, d, "a"), newLend(t, d, "b")
		settled(t, a.put(0))

		require.ErrorIs(t, a.v.Close(), contract.ErrDriverRejected, "before a true Drain")
		require.True(t, a.v.Drain(context.Background()))
		require.ErrorIs(t, a.v.Close(), contract.ErrDriverRejected, "with a registration live")
		require.NoError(t, a.v.Unregister(a.reg))
		require.NoError(t, a.v.Close())
		require.NoError(t, a.v.Close(), "closing a closed view")
		assert.Equal(t, driverview.Stats{Drained: true, Closed: true}, a.v.Stats())
		_, err := a.v.Register(a.mem.Region)
		require.ErrorIs(t, err, contract.ErrDriverRejected)
		_, err = a.v.Driver().(contract.Looker).Lookup(context.Background(), contract.LookupBatch{Keys: keys, Names: [][]byte{[]byte("a-0")}}, nil)
		require.ErrorIs(t, err, contract.ErrDriverRejected)
		require.ErrorIs(t, a.v.Driver().(contract.Recycler).Recycle(context.Background()), contract.ErrDriverRejected)

		// b, over the same shared driver, round-trips a's object.
		copy(b.mem.Slot(0), "untouched")
		st := settled(t, b.get(0))
		assert.Equal(t, []contract.RowStatus{contract.Miss}, st.Rows)
		bo := &op{}
		got, err := b.v.Get(contract.RowBatch{Keys: keys, Rows: []contract.Row{{Name: []byte("a-0"), Spans: []contract.Span{b.mem.Region.Slot(1)}}}}, nil, func() { bo.calls.Add(1) })
		require.NoError(t, err)
		assert.Equal(t, []contract.RowStatus{contract.Ready}, settled(t, got).Rows)
		assert.Equal(t, a.mem.Slot(0), b.mem.Slot(1))

		require.True(t, b.v.Drain(context.Background()))
		require.NoError(t, b.v.Unregister(b.reg))
		require.NoError(t, b.v.Close())
		assert.True(t, d.Drain(context.Background()), "the owner drains the shared driver last")
		require.NoError(t, d.Close())
		require.NoError(t, a.mem.Free())
		require.NoError(t, b.mem.Free())
	})
}

// A view refuses a span outside the regions registered through it (one
// in another view's memory), and a handle it did not issue, asking the
// shared driver nothing.
func TestAViewKeepsToItsOwnRegions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
		a, b := newLend(t, d, "a"), newLend(t, d, "b")
		foreign := contract.RowBatch{Keys: keys, Rows: []contract.Row{{Name: []byte("x"), Spans: []contract.Span{b.mem.Region.Slot(0)}}}}
		_, err := a.v.Put(foreign, nil)
		require.ErrorIs(t, err, contract.ErrDriverRejected)
		assert.ErrorContains(t, err, "no region registered through this view")
		_, err = a.v.Get(foreign, nil, nil)
		require.ErrorIs(t, err, contract.ErrDriverRejected)
		straddle := contract.RowBatch{Keys: keys, Rows: []contract.Row{{Name: []byte("y"), Spans: []contract.Span{{Addr: a.mem.Region.Base + uintptr(a.mem.Region.Len) - 8, Len: 16}}}}}
		_, err = a.v.Put(straddle, nil)
		require.ErrorIs(t, err, contract.ErrDriverRejected)
		assert.Zero(t, d.Admitted(memdrv.PutDir)+d.Admitted(memdrv.GetDir), "the shared driver was asked nothing")

		require.ErrorIs(t, a.v.Unregister(b.reg), contract.ErrDriverRejected)
		assert.Equal(t, []contract.RowStatus{contract.Ready}, settled(t, b.put(0)).Rows, "b's region stays registered")

		require.NoError(t, a.v.Unregister(a.reg))
		require.NoError(t, a.v.Unregister(a.reg), "a revoked handle of the view's own passes through")
		_, err = a.v.Put(a.batch(0), nil)
		require.ErrorIs(t, err, contract.ErrDriverRejected, "a revoked region is no longer the view's")
	})
}

// The view has exactly the optional interfaces of its shared driver.
func TestAViewHasTheSharedDriversInterfaces(t *testing.T) {
	s := memdrv.NewStore()
	for _, c := range []struct {
		name                       string
		shared                     contract.Driver
		looker, together, recycler bool
	}{
		{"memdrv", memdrv.New(s, memdrv.Options{}), true, false, true},
		{"memdrv together", memdrv.NewTogether(s, memdrv.Options{}), true, true, true},
		{"bare", bare{memdrv.New(s, memdrv.Options{})}, false, false, false},
		{"looker", bareLooker{bare{memdrv.New(s, memdrv.Options{})}}, true, false, false},
		{"recycler", bareRecycler{bare{memdrv.New(s, memdrv.Options{})}}, false, false, true},
		{"together", newBareTogether(memdrv.NewTogether(s, memdrv.Options{})), false, true, false},
		{"together looker", struct {
			bareTogether
			contract.Looker
		}{newBareTogether(memdrv.NewTogether(s, memdrv.Options{})), memdrv.New(s, memdrv.Options{})}, true, true, false},
		{"together recycler", struct {
			bareTogether
			contract.Recycler
		}{newBareTogether(memdrv.NewTogether(s, memdrv.Options{})), memdrv.New(s, memdrv.Options{})}, false, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := driverview.New(c.shared)
			d := v.Driver()
			_, l := d.(contract.Looker)
			_, tg := d.(contract.RegionsTogether)
			_, r := d.(contract.Recycler)
			assert.Equal(t, []bool{c.looker, c.together, c.recycler}, []bool{l, tg, r})
			assert.Equal(t, c.shared.Capabilities(), d.Capabilities())
			assert.Same(t, d, v.Driver(), "the same value every time")
		})
	}
}

// bare hides every optional interface of a driver.
type bare struct{ contract.Driver }

type bareLooker struct {
	bare
}

func (b bareLooker) Lookup(ctx context.Context, lb contract.LookupBatch, dst []contract.Presence) ([]contract.Presence, error) {
	return b.Driver.(contract.Looker).Lookup(ctx, lb, dst)
}

type bareRecycler struct{ bare }

func (b bareRecycler) Recycle(ctx context.Context) error {
	return b.Driver.(contract.Recycler).Recycle(ctx)
}

// bareTogether is a TogetherDriver with RegionsTogether alone.
type bareTogether struct {
	bare
	td *memdrv.TogetherDriver
}

func newBareTogether(td *memdrv.TogetherDriver) bareTogether { return bareTogether{bare{td}, td} }

func (b bareTogether) RegisterRegions(specs []contract.RegionSpec) (contract.Registration, error) {
	return b.td.RegisterRegions(specs)
}

func (b bareTogether) UnregisterRegions(reg contract.Registration) error {
	return b.td.UnregisterRegions(reg)
}
