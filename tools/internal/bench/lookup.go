package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
)

// lookupPrefix is the key prefix of measurement 6 over memdrv and the
// fake SDK (a real pool's is the run's own, as in measurement 5).
const lookupPrefix = "bench/lookup"

// lookupLayout says, in the report, how the views are laid out.
const lookupLayout = "1 name: one group of one name, Present. n ≥ 4 names: two groups (layers) of n/2 distinct names, " +
	"in each the first n/4 Present and the later n/4 Absent (a prefix stored in every layer). " +
	"Stop at first asks group 1 whole (one call: a call cannot stop inside itself) and group 2 below the bound n/4, " +
	"3n/4 names; every row asks all n; 2 calls either way. Both sides make the same calls, one lookup at a time."

// lookupReport is measurement 6: Backend.Lookup against the same store
// calls made directly, over memdrv, over the Mooncake driver on the fake
// SDK and, when given one, over a real pool.
type lookupReport struct {
	Layout  string  `json:"layout"`
	BlockMs float64 `json:"block_ms"`
	// Pool names the real pool, KeyPrefix the run's keys there;
	// PoolSkipped says why there was none.
	Pool        string       `json:"pool,omitempty"`
	KeyPrefix   string       `json:"pool_key_prefix,omitempty"`
	PoolSkipped string       `json:"pool_skipped,omitempty"`
	Cases       []lookupCase `json:"cases"`
}

// lookupCase is one store, size and mode. Both sides make Calls store
// calls a lookup (and SizeCalls get_size calls, a Mooncake client with
// one), asking Asked names of which Present are; times are ns a name
// asked, one figure per repetition (a block of Lookups lookups a side);
// OverNsPerName is kvshare's less the floor's, Ratio kvshare's over the
// floor's.
type lookupCase struct {
	Store  string `json:"store"`
	Names  int    `json:"names"`
	Groups int    `json:"groups"`
	Mode   string `json:"mode"`
	// Context is "can end" (the run's) or "cannot end" (one without a
	// Done channel), for a store whose driver may hand a lookup to a
	// goroutine of its own when the context can end; empty otherwise.
	Context          string `json:"context,omitempty"`
	Asked            int    `json:"asked"`
	Present          int    `json:"present"`
	Calls            int    `json:"calls"`
	SizeCalls        int    `json:"size_calls"`
	Lookups          int    `json:"lookups_per_block"`
	KvshareNsPerName spread `json:"kvshare_ns_per_name"`
	FloorNsPerName   spread `json:"floor_ns_per_name"`
	OverNsPerName    spread `json:"over_ns_per_name"`
	Ratio            spread `json:"ratio"`
}

// The stores of measurement 6, as the report names them.
const (
	lookupMemdrv   = "memdrv"
	lookupFake     = "mooncakedrv, fake SDK"
	lookupRealPool = "mooncakedrv, real pool"
	// lookupDisk is measurement 9's lookup case.
	lookupDisk = "diskdrv"
)

// lookupView is one size's view, the names stored before it is asked
// about, and each mode's plan.
type lookupView struct {
	n      int
	view   contract.View
	stored [][]byte
	plans  []lookupPlan // stop at first, every row
}

// lookupPlan is what one mode asks: the names of each store call, in
// order, and the answer expected, a row for each of the view's.
type lookupPlan struct {
	every bool
	calls [][][]byte
	want  []contract.Presence
	asked int
	// present is the Present rows of want.
	present int
}

func modeName(every bool) string {
	if every {
		return "every row"
	}
	return "stop at first"
}

// newLookupView lays out n names as lookupLayout says.
func newLookupView(n int) lookupView {
	lv := lookupView{n: n}
	if n == 1 {
		g := [][]byte{rowName('L', 1<<40)}
		lv.view = contract.View{Groups: []contract.Group{{Names: g}}}
		lv.stored = g
		for _, every := range []bool{false, true} {
			lv.plans = append(lv.plans, lookupPlan{every: every, calls: [][][]byte{g}, want: []contract.Presence{contract.Present}, asked: 1, present: 1})
		}
		return lv
	}
	h, q := n/2, n/4
	var groups [2][][]byte
	for gi := range groups {
		for i := range h {
			name := rowName('L', n<<40|gi<<32|i)
			groups[gi] = append(groups[gi], name)
			if i < q {
				lv.stored = append(lv.stored, name)
			}
		}
		lv.view.Groups = append(lv.view.Groups, contract.Group{Names: groups[gi]})
	}
	for _, every := range []bool{false, true} {
		p := lookupPlan{every: every, want: make([]contract.Presence, n)}
		second := q // stop at first: group 2 below group 1's Present prefix
		if every {
			second = h
		}
		p.calls = [][][]byte{groups[0], groups[1][:second]}
		p.asked = h + second
		for gi, asked := range []int{h, second} {
			for i := range asked {
				w := contract.Absent
				if i < q {
					w = contract.Present
					p.present++
				}
				p.want[gi*h+i] = w
			}
		}
		lv.plans = append(lv.plans, p)
	}
	return lv
}

// lookupStage is one store of measurement 6: kvshare (a backend over a
// driver of the store) and its floor, the same store calls made
// directly.
type lookupStage struct {
	store string
	// blocks says the stage's driver may block in a lookup, so it hands
	// the lookup to a goroutine of its own when the caller's context can
	// end: such a stage is measured with a context of each kind, its
	// floor with and without the same hand-off.
	blocks bool
	// measurement is the one the stage serves, for the progress line
	// (0: Lookup).
	measurement Measurement
	kv          *lender
	// floor prepares the calls of one plan, made directly within ctx,
	// before the clock starts; with handOff each call is made on a
	// goroutine of its own that the caller waits for.
	floor func(ctx context.Context, calls [][][]byte, handOff bool) (*lookupFloor, error)
	// put stores the objects under names (outside the clock); remove
	// removes them after (nil: nothing to remove).
	put    func(names [][]byte) error
	remove func(names [][]byte) error
	close  func() error
}

// lookupFloor is one plan's store calls, prepared: run makes them once;
// answers are the last run's answers, one per name asked, in call
// order; sizeCalls counts the get_size calls of the last run.
type lookupFloor struct {
	run       func() error
	answers   func() []contract.Presence
	sizeCalls func() int
}

// measureLookup runs measurement 6: over memdrv, over the Mooncake
// driver on the fake SDK and, when open is not nil, over the real pool
// it opens. What ran before an error is in the report it returns with
// it.
func measureLookup(ctx context.Context, o Options, open func() (*poolTarget, error), step func(string)) (*lookupReport, error) {
	rep := &lookupReport{Layout: lookupLayout, BlockMs: ms(o.Lookup.Block)}
	views := make([]lookupView, len(o.Lookup.Sizes))
	for i, n := range o.Lookup.Sizes {
		views[i] = newLookupView(n)
	}
	stages := []func() (*lookupStage, error){
		func() (*lookupStage, error) { return memdrvLookupStage(o) },
		func() (*lookupStage, error) { return fakeLookupStage(o) },
	}
	if open != nil {
		stages = append(stages, func() (*lookupStage, error) {
			step("6 lookup: opening the pool")
			target, err := open()
			if err != nil {
				return nil, err
			}
			s, prefix, err := realPoolLookupStage(o, target)
			rep.Pool, rep.KeyPrefix = target.describe, prefix
			return s, err
		})
	} else {
		rep.PoolSkipped = skippedPool
	}
	for _, build := range stages {
		s, err := build()
		if err != nil {
			return rep, err
		}
		var cases []lookupCase
		// A profile tells the stores apart: go tool pprof -tagfocus store=memdrv.
		pprof.Do(ctx, pprof.Labels("store", s.store), func(ctx context.Context) { cases, err = s.measure(ctx, o, views, step) })
		rep.Cases = append(rep.Cases, cases...)
		if err = errors.Join(err, s.close()); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// measure stores every view's objects, measures each size and mode, and
// removes the objects.
func (s *lookupStage) measure(ctx context.Context, o Options, views []lookupView, step func(string)) ([]lookupCase, error) {
	var stored [][]byte
	for _, lv := range views {
		stored = append(stored, lv.stored...)
	}
	if err := s.put(stored); err != nil {
		err = fmt.Errorf("bench: lookup over %s: storing the objects: %w", s.store, err)
		if s.remove != nil {
			err = errors.Join(err, s.remove(stored))
		}
		return nil, err
	}
	var cases []lookupCase
	var err error
	for _, lv := range views {
		for _, p := range lv.plans {
			for _, canEnd := range s.contexts() {
				var c lookupCase
				if c, err = s.measureCase(ctx, o, lv, p, canEnd, step); err != nil {
					break
				}
				cases = append(cases, c)
			}
			if err != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	if s.remove != nil {
		err = errors.Join(err, s.remove(stored))
	}
	return cases, err
}

// The contexts of a blocking stage's cases.
const (
	contextCanEnd    = "can end"
	contextCannotEnd = "cannot end"
)

// contexts are the kinds of context the stage is measured with: whether
// each can end.
func (s *lookupStage) contexts() []bool {
	if s.blocks {
		return []bool{true, false}
	}
	return []bool{true}
}

// measureCase measures one size and mode with a context that can end
// (the run's) or one that cannot: both sides checked once
// against the plan, the block's length calibrated on kvshare, then per
// repetition a block of each side (which goes first changes every
// repetition), each after a collection and one lookup outside the
// count.
func (s *lookupStage) measureCase(ctx context.Context, o Options, lv lookupView, p lookupPlan, canEnd bool, step func(string)) (lookupCase, error) {
	c := lookupCase{Store: s.store, Names: lv.n, Groups: len(lv.view.Groups), Mode: modeName(p.every),
		Asked: p.asked, Present: p.present, Calls: len(p.calls)}
	run := ctx // the run's, checked between repetitions
	if s.blocks {
		c.Context = contextCanEnd
		if !canEnd {
			c.Context, ctx = contextCannotEnd, context.WithoutCancel(ctx)
		}
	}
	what := c.describe()
	fl, err := s.floor(ctx, p.calls, s.blocks && canEnd)
	if err != nil {
		return c, fmt.Errorf("bench: %s: %w", what, err)
	}
	opts := binding.LookupOptions{Every: p.every}
	kv := func() error {
		_, err := s.kv.backend.Lookup(ctx, lv.view, opts)
		return err
	}
	if c.SizeCalls, err = s.check(ctx, lv, p, fl, opts); err != nil {
		return c, fmt.Errorf("bench: %s: %w", what, err)
	}
	if c.Lookups, err = calibrate(o.Lookup.Block, kv); err != nil {
		return c, fmt.Errorf("bench: %s: %w", what, err)
	}
	var kvNs, flNs, over, ratios []float64
	for r := range o.Reps {
		if err := run.Err(); err != nil {
			return c, err
		}
		m := s.measurement
		if m == 0 {
			m = Lookup
		}
		step(fmt.Sprintf("%d %s", m, c.describe()))
		var kt, ft time.Duration
		var kerr, ferr error
		runKv := func() { kt, kerr = timeBlock(c.Lookups, kv) }
		runFl := func() { ft, ferr = timeBlock(c.Lookups, fl.run) }
		inTurn(r, runKv, runFl)
		if err := errors.Join(kerr, ferr); err != nil {
			return c, fmt.Errorf("bench: %s: %w", what, err)
		}
		names := float64(c.Lookups * p.asked)
		kn, fn := float64(kt)/names, float64(ft)/names
		kvNs, flNs, over, ratios = append(kvNs, kn), append(flNs, fn), append(over, kn-fn), append(ratios, ratio(kn, fn))
	}
	c.KvshareNsPerName, c.FloorNsPerName, c.OverNsPerName, c.Ratio = spreadOf(kvNs), spreadOf(flNs), spreadOf(over), spreadOf(ratios)
	return c, nil
}

// describe names the case, as its goals and errors do.
func (c lookupCase) describe() string {
	what := fmt.Sprintf("lookup over %s, %d names, %s", c.Store, c.Names, c.Mode)
	if c.Context != "" {
		what += ", context " + c.Context
	}
	return what
}

// check makes one lookup on each side, outside the clock, and holds both
// to the plan: kvshare asked the plan's names (the backend's count) and
// answered every row as expected, with the expected bound; the floor
// answered the names it asked as expected. It returns the floor's
// get_size calls.
func (s *lookupStage) check(ctx context.Context, lv lookupView, p lookupPlan, fl *lookupFloor, opts binding.LookupOptions) (int, error) {
	before := s.kv.backend.Stats().LookupNames
	res, err := s.kv.backend.Lookup(ctx, lv.view, opts)
	if err != nil {
		return 0, err
	}
	if asked := s.kv.backend.Stats().LookupNames - before; asked != int64(p.asked) {
		return 0, fmt.Errorf("kvshare asked %d names, the plan %d", asked, p.asked)
	}
	if firstDifference(res.Rows, p.want) >= 0 {
		return 0, fmt.Errorf("kvshare answered %s, want %s", presences(res.Rows), presences(p.want))
	}
	if want := lv.view.PresentBound(p.want); res.Bound != want {
		return 0, fmt.Errorf("kvshare's bound is %d, want %d", res.Bound, want)
	}
	if err := fl.run(); err != nil {
		return 0, err
	}
	var want []contract.Presence
	base := 0
	for gi, call := range p.calls {
		want = append(want, p.want[base:base+len(call)]...)
		base += len(lv.view.Groups[gi].Names)
	}
	if got := fl.answers(); firstDifference(got, want) >= 0 {
		return 0, fmt.Errorf("the floor answered %s, want %s", presences(got), presences(want))
	}
	return fl.sizeCalls(), nil
}

// firstDifference is the first index where a and b differ (a length
// too), or -1.
func firstDifference(a, b []contract.Presence) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// presences prints answers as runs: "3 present, 1 absent".
func presences(ps []contract.Presence) string {
	if len(ps) == 0 {
		return "nothing"
	}
	out := ""
	for i := 0; i < len(ps); {
		j := i
		for j < len(ps) && ps[j] == ps[i] {
			j++
		}
		if out != "" {
			out += ", "
		}
		out += fmt.Sprintf("%d %v", j-i, ps[i])
		i = j
	}
	return out
}

// calibrate finds how many lookups take about block: it doubles a count
// from 1 until a run of it takes a tenth of block, then scales.
func calibrate(block time.Duration, call func() error) (int, error) {
	for n := 1; ; n *= 2 {
		start := time.Now()
		for range n {
			if err := call(); err != nil {
				return 0, err
			}
		}
		el := time.Since(start)
		if el >= block/10 || n >= 1<<24 {
			return max(1, int(float64(n)*float64(block)/float64(max(el, 1)))), nil
		}
	}
}

// timeBlock makes n lookups after a collection and one lookup outside
// the count, and returns their wall time.
func timeBlock(n int, call func() error) (time.Duration, error) {
	runtime.GC()
	if err := call(); err != nil {
		return 0, err
	}
	start := time.Now()
	for range n {
		if err := call(); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}
