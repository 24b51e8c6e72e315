package binding

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// lookingDriver is the fake driver with a lookup: presence by key, every
// call recorded.
type lookingDriver struct {
	*fakeDriver
	mu       sync.Mutex
	presence map[string]contract.Presence
	calls    [][]string // the keys of each call
	refuse   error
	wrong    bool // answer one presence too few
	panics   bool
}

func newLooking() *lookingDriver {
	return &lookingDriver{fakeDriver: newFake(getPut), presence: map[string]contract.Presence{}}
}

func (d *lookingDriver) Lookup(ctx context.Context, b contract.LookupBatch, dst []contract.Presence) ([]contract.Presence, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.panics {
		panic("lookup broke")
	}
	if d.refuse != nil {
		return nil, d.refuse
	}
	var ks []string
	dst = dst[:0]
	for i := range b.Names {
		k := string(b.AppendKey(nil, i))
		ks = append(ks, k)
		p, ok := d.presence[k]
		if !ok {
			p = contract.Absent
		}
		dst = append(dst, p)
	}
	d.calls = append(d.calls, ks)
	if d.wrong {
		dst = dst[:len(dst)-1]
	}
	return dst, nil
}

// layers is a lookup view of layers groups of the names b0, b1, …
func layers(n, blocks int) contract.View {
	var v contract.View
	for l := range n {
		var g contract.Group
		for b := range blocks {
			g.Names = append(g.Names, fmt.Appendf(nil, "L%d-b%d", l, b))
		}
		v.Groups = append(v.Groups, g)
	}
	return v
}

func TestLookupStopsAtTheBound(t *testing.T) {
	d := newLooking()
	b, _ := fakeBackend(t, d, 1, Config{})
	p := func(name string) { d.presence[keyOf(t, name)] = contract.Present }
	for _, n := range []string{"L0-b0", "L0-b1", "L0-b3", "L1-b0", "L1-b1", "L1-b2", "L1-b3"} {
		p(n)
	}
	d.presence[keyOf(t, "L0-b2")] = contract.InFlight
	v := layers(2, 4)

	res, err := b.Lookup(t.Context(), v, LookupOptions{})
	require.NoError(t, err)
	P, I, U := contract.Present, contract.InFlight, contract.Unknown
	assert.Equal(t, []contract.Presence{P, P, I, P, P, P, U, U}, res.Rows, "layer 1 is asked only below layer 0's prefix")
	assert.Equal(t, 2, res.Bound)
	require.Len(t, d.calls, 2)
	assert.Len(t, d.calls[1], 2, "two names of layer 1 asked")
	st := b.Stats()
	assert.EqualValues(t, 1, st.Lookups)
	assert.EqualValues(t, 6, st.LookupNames)
	assert.EqualValues(t, 5, st.LookupPresent)

	res, err = b.Lookup(t.Context(), v, LookupOptions{Every: true})
	require.NoError(t, err)
	assert.Equal(t, []contract.Presence{P, P, I, P, P, P, P, P}, res.Rows)
	assert.Equal(t, 2, res.Bound)
	assert.EqualValues(t, 14, b.Stats().LookupNames)
}

// A group whose names repeat is asked in calls cut at the repeat: no call
// carries a name twice.
func TestLookupCutsAtARepeatedName(t *testing.T) {
	d := newLooking()
	b, _ := fakeBackend(t, d, 1, Config{})
	v := contract.View{Groups: []contract.Group{{Names: [][]byte{[]byte("a"), []byte("b"), []byte("a"), []byte("c")}}}}
	for _, n := range []string{"a", "b", "c"} {
		d.presence[keyOf(t, n)] = contract.Present
	}
	res, err := b.Lookup(t.Context(), v, LookupOptions{})
	require.NoError(t, err)
	assert.Equal(t, 4, res.Bound)
	require.Len(t, d.calls, 2)
	for _, c := range d.calls {
		seen := map[string]bool{}
		for _, k := range c {
			assert.False(t, seen[k], "a name twice in one call")
			seen[k] = true
		}
	}
}

func TestLookupRefusals(t *testing.T) {
	plain := newFake(getPut)
	b, _ := fakeBackend(t, plain, 1, Config{})
	_, err := b.Lookup(t.Context(), layers(1, 1), LookupOptions{})
	require.ErrorIs(t, err, ErrNoLookup)

	d := newLooking()
	b, _ = fakeBackend(t, d, 1, Config{})
	for name, tc := range map[string]struct {
		v    contract.View
		want string
	}{
		"an empty name":   {contract.View{Groups: []contract.Group{{Names: [][]byte{[]byte("a"), {}}}}}, "group 0 row 1: name of 0 bytes"},
		"a name too long": {contract.View{Groups: []contract.Group{{}, {Names: [][]byte{make([]byte, 513)}}}}, "group 1 row 0: name of 513 bytes"},
		"slots and names": {contract.View{Groups: []contract.Group{{Slots: []int32{0}, Names: [][]byte{[]byte("a"), []byte("b")}}}}, "group 0: 1 slots but 2 names"},
	} {
		_, err := b.Lookup(t.Context(), tc.v, LookupOptions{})
		require.ErrorIs(t, err, contract.ErrInvalidSubmission, name)
		assert.ErrorContains(t, err, tc.want, name)
	}
	assert.Empty(t, d.calls, "nothing asked of a malformed view")

	d.refuse = fmt.Errorf("%w: drained", contract.ErrDriverRejected)
	_, err = b.Lookup(t.Context(), layers(1, 2), LookupOptions{})
	require.ErrorIs(t, err, contract.ErrDriverRejected)
	d.refuse = nil

	d.wrong = true
	_, err = b.Lookup(t.Context(), layers(1, 2), LookupOptions{})
	assert.ErrorContains(t, err, "answered 1 presences for 2 names")
	d.wrong = false

	d.panics = true
	_, err = b.Lookup(t.Context(), layers(1, 2), LookupOptions{})
	assert.ErrorContains(t, err, "the driver panicked: lookup broke")
	d.panics = false

	assert.Nil(t, b.Shutdown(t.Context()))
	_, err = b.Lookup(t.Context(), layers(1, 2), LookupOptions{})
	assert.ErrorIs(t, err, contract.ErrSubmissionRejected)
}

// Nothing is allocated per row beyond the answer.
func TestLookupAllocatesOnlyTheAnswer(t *testing.T) {
	d := newLooking()
	d.calls = nil
	b, _ := fakeBackend(t, d, 1, Config{})
	v := layers(2, 256)
	for _, g := range v.Groups {
		for _, n := range g.Names {
			d.presence[keyOf(t, string(n))] = contract.Present
		}
	}
	looker := &countingLooker{inner: d}
	b.drv = looker // the fake's own Lookup allocates its keys; this one does not
	ctx := context.Background()
	_, err := b.Lookup(ctx, v, LookupOptions{}) // warm the cutter pool
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := b.Lookup(ctx, v, LookupOptions{}); err != nil {
			panic(err)
		}
	})
	assert.LessOrEqual(t, allocs, 1.0, "the answer's slice, nothing per row")
}

// countingLooker answers Present for every name without allocating.
type countingLooker struct {
	inner *lookingDriver
	calls int
}

func (c *countingLooker) Capabilities() contract.Capabilities { return c.inner.Capabilities() }
func (c *countingLooker) Register(r contract.SlotRegion) (contract.Registration, error) {
	return c.inner.Register(r)
}
func (c *countingLooker) Unregister(r contract.Registration) error { return c.inner.Unregister(r) }
func (c *countingLooker) Put(b contract.RowBatch, f func()) (contract.Operation, error) {
	return c.inner.Put(b, f)
}
func (c *countingLooker) Get(b contract.RowBatch, h contract.Hint, f func()) (contract.Operation, error) {
	return c.inner.Get(b, h, f)
}
func (c *countingLooker) Drain(ctx context.Context) bool { return c.inner.Drain(ctx) }
func (c *countingLooker) Close() error                   { return c.inner.Close() }
func (c *countingLooker) Lookup(_ context.Context, b contract.LookupBatch, dst []contract.Presence) ([]contract.Presence, error) {
	c.calls++
	dst = dst[:0]
	for range b.Names {
		dst = append(dst, contract.Present)
	}
	return dst, nil
}

// Over memdrv: what a publish stored is Present, what another writer is
// writing InFlight, the rest Absent; the bound is the layers' least
// Present prefix.
func TestLookupOverMemdrv(t *testing.T) {
	l := newLender(t, 8, contract.Host)
	store := memdrv.NewStore()
	b, err := Open(t.Context(), Loan{Regions: l.Regions(), Hold: l}, memdrv.New(store, memdrv.Options{}), quietConfig)
	require.NoError(t, err)
	v := contract.View{}
	for layer := range 2 {
		g := contract.Group{}
		for block := range 3 {
			g.Slots = append(g.Slots, int32(layer*3+block))
			g.Names = append(g.Names, fmt.Appendf(nil, "L%d-b%d", layer, block))
		}
		v.Groups = append(v.Groups, g)
	}
	res, err := b.Lookup(t.Context(), v, LookupOptions{})
	require.NoError(t, err)
	assert.Zero(t, res.Bound, "nothing stored yet")

	stored := contract.View{Groups: []contract.Group{
		{Slots: []int32{0, 1}, Names: v.Groups[0].Names[:2]},
		{Region: 0, Slots: []int32{3}, Names: v.Groups[1].Names[:1]},
	}}
	a, err := b.Publish(stored, nil)
	require.NoError(t, err)
	<-a.Done()
	key, err := b.Key(v.Groups[1].Names[1])
	require.NoError(t, err)
	finish := store.BeginWrite(key)
	res, err = b.Lookup(t.Context(), v, LookupOptions{Every: true})
	require.NoError(t, err)
	P, A, I := contract.Present, contract.Absent, contract.InFlight
	assert.Equal(t, []contract.Presence{P, P, A, P, I, A}, res.Rows)
	assert.Equal(t, 1, res.Bound)
	finish(nil)
	require.NoError(t, b.Close(t.Context()))
}
