package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakedrv/pool/pooltest"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

func TestLookupViewLayout(t *testing.T) {
	p, a, u := contract.Present, contract.Absent, contract.Unknown

	one := newLookupView(1)
	require.Len(t, one.view.Groups, 1)
	assert.Len(t, one.stored, 1)
	for _, plan := range one.plans {
		assert.Equal(t, []contract.Presence{p}, plan.want)
		assert.Equal(t, 1, plan.asked)
		assert.Len(t, plan.calls, 1)
	}

	eight := newLookupView(8)
	require.Len(t, eight.view.Groups, 2)
	assert.Len(t, eight.stored, 4, "the first quarter of each group")
	stop, every := eight.plans[0], eight.plans[1]
	assert.False(t, stop.every)
	assert.Equal(t, []contract.Presence{p, p, a, a, p, p, u, u}, stop.want, "group 2 asked below group 1's prefix")
	assert.Equal(t, 6, stop.asked)
	assert.Equal(t, 4, stop.present)
	assert.Equal(t, []contract.Presence{p, p, a, a, p, p, a, a}, every.want)
	assert.Equal(t, 8, every.asked)
	for _, plan := range eight.plans {
		require.Len(t, plan.calls, 2)
		assert.Equal(t, eight.view.Groups[0].Names, plan.calls[0], "group 1 whole, one call")
		assert.Equal(t, 2, eight.view.PresentBound(plan.want))
	}
	seen := map[string]bool{}
	for _, lv := range []lookupView{one, eight, newLookupView(256)} {
		for _, g := range lv.view.Groups {
			for _, n := range g.Names {
				assert.False(t, seen[string(n)], "every name of every size is distinct")
				seen[string(n)] = true
			}
		}
	}
}

func TestLookupMeasuresBothStoresAndSaysWhyNoPool(t *testing.T) {
	o := tiny()
	_, fakeSizes := any(fakesdk.New(fakesdk.Options{}).Client()).(mooncakesdk.Sizer)
	var steps []string
	rep, err := measureLookup(t.Context(), o, nil, func(s string) { steps = append(steps, s) })
	require.NoError(t, err)
	assert.Len(t, steps, (2*2+2*2*2)*o.Reps, "memdrv: 2 sizes, 2 modes; the fake SDK: and 2 contexts")
	assert.Equal(t, skippedPool, rep.PoolSkipped)
	assert.Empty(t, rep.Pool)
	assert.Equal(t, lookupLayout, rep.Layout)
	assert.InDelta(t, 1, rep.BlockMs, 1e-9)
	require.Len(t, rep.Cases, 4+8)
	for i, c := range rep.Cases {
		// memdrv: size, mode; the fake SDK: size, mode, context
		store, size, every, context := lookupMemdrv, i/2, i%2 == 1, ""
		if i >= 4 {
			j := i - 4
			store, size, every = lookupFake, j/4, j/2%2 == 1
			context = []string{contextCanEnd, contextCannotEnd}[j%2]
		}
		names := []int{1, 8}[size]
		assert.Equal(t, store, c.Store)
		assert.Equal(t, names, c.Names)
		assert.Equal(t, modeName(every), c.Mode)
		assert.Equal(t, context, c.Context)
		want := map[[2]int]int{{1, 0}: 1, {1, 1}: 1, {8, 0}: 6, {8, 1}: 8}[[2]int{c.Names, map[bool]int{false: 0, true: 1}[every]}]
		assert.Equal(t, want, c.Asked, "%+v", c)
		assert.Equal(t, max(1, c.Names/2), c.Present, "a quarter of each group Present: %+v", c)
		assert.Equal(t, c.Groups, c.Calls, "one call a group")
		assert.Equal(t, sizeCalls(c, c.Store == lookupFake && fakeSizes), c.SizeCalls, "%+v", c)
		assert.Positive(t, c.Lookups)
		for _, s := range []spread{c.KvshareNsPerName, c.FloorNsPerName, c.Ratio} {
			assert.Equal(t, o.Reps, s.N)
			assert.Positive(t, s.Median)
		}
		assert.InDelta(t, c.KvshareNsPerName.Median-c.FloorNsPerName.Median, c.OverNsPerName.Median, max(1, c.KvshareNsPerName.Max))
	}

	r := &Report{Lookup: rep}
	r.judge()
	assert.Len(t, r.Goals, 4*2+8, "memdrv: ratio and ns a name; the fake SDK: ratio, in each context")
	for _, g := range r.Goals {
		assert.Equal(t, int(Lookup), g.Measurement)
		assert.True(t, g.AtMost)
	}
}

// sizeCalls is the get_size calls a lookup of case c makes over a
// client that has it (sizer) or not: one for each call with a key
// answering 0.
func sizeCalls(c lookupCase, sizer bool) int {
	if !sizer || c.Names == 1 {
		return 0
	}
	if c.Mode == modeName(true) {
		return 2
	}
	return 1
}

// A store that does not hold what the plan says ends the measurement
// with an error naming the difference.
func TestLookupRefusesAnAnswerOffThePlan(t *testing.T) {
	o := tiny()
	s, err := memdrvLookupStage(o)
	require.NoError(t, err)
	s.put = func([][]byte) error { return nil } // nothing stored
	_, err = s.measure(t.Context(), o, []lookupView{newLookupView(1)}, noSteps)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "lookup over memdrv, 1 names, stop at first: kvshare answered 1 absent, want 1 present")
	require.NoError(t, s.close())
}

// The real-pool case over a fake pool: the same code as on a real one.
func TestLookupOverAFakePool(t *testing.T) {
	store := fakesdk.New(fakesdk.Options{})
	stopped := false
	open := func() (*poolTarget, error) {
		return &poolTarget{
			client:   store.Client(),
			config:   mooncakesdk.StoreConfig{Blob: mooncakesdk.BlobConfig{KeyPrefix: "test"}, Mooncake: mooncakesdk.MooncakeConfig{Workers: 2}},
			describe: "a fake pool",
			stop:     func() error { stopped = true; return nil },
		}, nil
	}
	o := tiny()
	o.Reps = 1
	rep, err := measureLookup(t.Context(), o, open, noSteps)
	require.NoError(t, err)
	assert.True(t, stopped, "the target is closed")
	assert.Empty(t, rep.PoolSkipped)
	assert.Equal(t, "a fake pool", rep.Pool)
	assert.Regexp(t, `^test/bench/\d{8}t\d{6}z-[0-9a-f]{8}$`, rep.KeyPrefix)
	require.Len(t, rep.Cases, 4+8+8)
	for _, c := range rep.Cases[12:] {
		assert.Equal(t, lookupRealPool, c.Store)
		assert.Positive(t, c.Ratio.Median)
	}
	assert.Zero(t, store.Used(), "every object removed")
	assert.Positive(t, store.Calls().Remove)

	r := &Report{Lookup: rep}
	r.judge()
	assert.Len(t, r.Goals, 4*2+8+8, "memdrv: ratio and ns a name; the fake SDK and the pool: ratio, in each context")
}

func TestLookupAgainstALoopbackPool(t *testing.T) {
	dir := pooltest.Dir(t)
	o := tiny()
	o.Only = []Measurement{Lookup}
	o.Pool.MooncakeDir = dir
	o.Pool.Segment = 64 << 20
	rep, err := Run(t.Context(), o, nil, nil)
	require.NoError(t, err)
	l := rep.Lookup
	require.NotNil(t, l)
	assert.Contains(t, l.Pool, "a loopback pool started from "+dir)
	require.Len(t, l.Cases, 4+8+8)
	for _, c := range l.Cases[12:] {
		assert.Equal(t, lookupRealPool, c.Store)
		assert.Equal(t, sizeCalls(c, true), c.SizeCalls, "the real client has get_size: %+v", c)
		assert.Positive(t, c.FloorNsPerName.Median)
	}
	assert.Len(t, rep.Goals, 4*2+8+8)
}

func TestWrap(t *testing.T) {
	assert.Equal(t, []string{"ab cd", "efghij", "k"}, wrap("ab cd  efghij k", 5))
	assert.Empty(t, wrap(" ", 5))
}
