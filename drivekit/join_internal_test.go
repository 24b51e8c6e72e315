package drivekit

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// holding is a tearing store whose calls, when gate is set, each wait
// for one receive from it (or its close). It counts the calls inside
// it by direction, the most at once, and records whether each call
// could be cancelled and its Parts; a call whose Cancelled channel is
// closed when it is let go ends every row Cancelled, as a store that
// held its rows may. With asOne it answers a shared call as one
// request: one Unprovable row makes every row of the call Unprovable.
type holding struct {
	*tearing
	gate  chan struct{}
	asOne bool

	mu          sync.Mutex
	inside      map[contract.Direction]int
	most        map[contract.Direction]int
	cancellable []bool
	parts       [][]int
}

func newHolding(v *verdicts, gated bool) *holding {
	h := &holding{
		tearing: &tearing{verdicts: v},
		inside:  map[contract.Direction]int{},
		most:    map[contract.Direction]int{},
	}
	if gated {
		h.gate = make(chan struct{})
	}
	return h
}

func (h *holding) Transfer(c *Call) {
	h.mu.Lock()
	h.inside[c.Dir]++
	h.most[c.Dir] = max(h.most[c.Dir], h.inside[c.Dir])
	h.cancellable = append(h.cancellable, c.Cancelled() != nil)
	h.parts = append(h.parts, append([]int(nil), c.Parts...))
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.inside[c.Dir]--
		h.mu.Unlock()
	}()
	if h.gate != nil {
		<-h.gate
	}
	select {
	case <-c.Cancelled(): // nil for a shared call: never
		for i := range c.Ends {
			c.Ends[i].Status = contract.Cancelled
		}
		return
	default:
	}
	h.verdicts.Transfer(c)
	if h.asOne && c.Shared() && slices.ContainsFunc(c.Ends, func(e End) bool { return e.Unprovable }) {
		for i := range c.Ends {
			c.Ends[i].Unprovable = true
		}
	}
}

// callParts returns the Parts of each call so far.
func (h *holding) callParts() [][]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.parts
}

// counts returns the calls inside the store now and the most at once,
// by direction, and whether each call so far could be cancelled.
func (h *holding) counts() (inside, most map[contract.Direction]int, cancellable []bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return clone(h.inside), clone(h.most), append([]bool(nil), h.cancellable...)
}

func clone(m map[contract.Direction]int) map[contract.Direction]int {
	out := map[contract.Direction]int{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// spread is a batch whose row i is named names[i] and spans widths[i]
// slots of rigRegion, the rows' slots following each other from first.
func spread(first int, names []string, widths ...int) contract.RowBatch {
	b := contract.RowBatch{Keys: plainKeys{}}
	slot := first
	for i, n := range names {
		row := contract.Row{Name: []byte(n)}
		w := 1
		if i < len(widths) {
			w = widths[i]
		}
		for range w {
			row.Spans = append(row.Spans, rigRegion.Slot(slot))
			slot++
		}
		b.Rows = append(b.Rows, row)
	}
	return b
}

// A batch is cut before the row that would take its call past
// CallBytes (64 bytes a slot here), and a row larger than CallBytes
// makes a call alone; CallRows still bounds every call.
func TestABatchIsCutIntoCallsOfAtMostCallBytes(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e"}
	for _, tt := range []struct {
		name      string
		callRows  int
		callBytes int64
		widths    []int
		want      [][]string
	}{
		{"no byte bound", 8, 0, nil, [][]string{{"a", "b", "c", "d", "e"}}},
		{"two rows a call", 8, 128, nil, [][]string{{"a", "b"}, {"c", "d"}, {"e"}}},
		{"a bound just under two rows", 8, 127, nil, [][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}}},
		{"rows bound first", 2, 1024, nil, [][]string{{"a", "b"}, {"c", "d"}, {"e"}}},
		{"a large row inside", 8, 128, []int{1, 3, 1, 1, 1}, [][]string{{"a"}, {"b"}, {"c", "d"}, {"e"}}},
		{"a large row first", 8, 128, []int{3, 1, 1, 1, 1}, [][]string{{"a"}, {"b", "c"}, {"d", "e"}}},
		{"every row larger", 8, 32, nil, [][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				v := &verdicts{}
				d, reg, err := newRigWith(v, Options{Workers: 1, CallRows: tt.callRows, CallBytes: tt.callBytes,
					Caps: contract.Capabilities{Put: true, Get: true, MultiSpan: true}})
				require.NoError(t, err)
				op, err := d.Put(spread(0, names, tt.widths...), nil)
				require.NoError(t, err)
				st := settle(op)
				assert.Equal(t, tt.want, v.callKeys())
				assert.Equal(t, contract.Ended, st.Access)
				assert.Equal(t, int64(len(tt.want)), d.Stats().Parts)
				teardown(t, d, reg)
			})
		})
	}
}

// stagedOp is an operation a join test admits while the driver is
// paused.
type stagedOp struct {
	dir   contract.Direction
	names []string
	hint  contract.Hint
}

func get(names ...string) stagedOp { return stagedOp{dir: contract.GetDir, names: names} }
func put(names ...string) stagedOp { return stagedOp{dir: contract.PutDir, names: names} }
func hinted(names ...string) stagedOp {
	return stagedOp{dir: contract.GetDir, names: names, hint: "near"}
}

// stage admits ops on d, paused, each over slots of rigRegion of its
// own, and lets the workers go once all are queued.
func stage(t *testing.T, d *Driver, ops ...stagedOp) []contract.Operation {
	t.Helper()
	resume := d.Pause()
	defer resume()
	var out []contract.Operation
	slot := 0
	for _, s := range ops {
		b := spread(slot, s.names)
		slot += len(s.names)
		var op contract.Operation
		var err error
		if s.dir == contract.PutDir {
			op, err = d.Put(b, nil)
		} else {
			op, err = d.Get(b, s.hint, nil)
		}
		require.NoError(t, err)
		out = append(out, op)
	}
	return out
}

// With JoinCalls, the parts queued while the one worker is held join
// the part it takes into one store call: same direction only, within
// CallRows and CallBytes, never a hinted get, never a key twice (a put
// row that is an own write reaches no store and does not count). A
// call with rows of several operations cannot be cancelled.
func TestQueuedPartsJoinOneStoreCall(t *testing.T) {
	for _, tt := range []struct {
		name        string
		alone       bool // GetsFirst without JoinCalls
		callRows    int
		callBytes   int64
		ops         []stagedOp
		want        [][]string
		cancellable []bool
		shared      [2]int64 // CallsShared, PartsShared
		parts       [][]int  // each call's Parts
		rows        [][]contract.RowStatus
	}{
		{
			name: "no JoinCalls", alone: true, callRows: 8,
			ops:  []stagedOp{get("a"), get("b"), get("c")},
			want: [][]string{{"a"}, {"b"}, {"c"}}, cancellable: []bool{true, true, true}, parts: [][]int{{0}, {0}, {0}},
		},
		{
			name: "gets of three operations", callRows: 8,
			ops:  []stagedOp{get("a"), get("b"), get("c")},
			want: [][]string{{"a", "b", "c"}}, cancellable: []bool{false}, shared: [2]int64{1, 3}, parts: [][]int{{0, 1, 2}},
		},
		{
			name: "within CallRows", callRows: 3,
			ops:  []stagedOp{get("a", "b"), get("c"), get("d", "e")},
			want: [][]string{{"a", "b", "c"}, {"d", "e"}}, cancellable: []bool{false, true}, shared: [2]int64{1, 2}, parts: [][]int{{0, 2}, {0}},
		},
		{
			name: "within CallBytes", callRows: 8, callBytes: 128,
			ops:  []stagedOp{get("a"), get("b"), get("c")},
			want: [][]string{{"a", "b"}, {"c"}}, cancellable: []bool{false, true}, shared: [2]int64{1, 2}, parts: [][]int{{0, 1}, {0}},
		},
		{
			name: "one direction a call", callRows: 8,
			ops:  []stagedOp{put("a"), get("b"), put("c"), get("d")},
			want: [][]string{{"b", "d"}, {"a", "c"}}, cancellable: []bool{false, false}, shared: [2]int64{2, 4}, parts: [][]int{{0, 1}, {0, 1}},
		},
		{
			name: "a hinted get joins none", callRows: 8,
			ops:  []stagedOp{get("a"), hinted("b"), get("c")},
			want: [][]string{{"a"}, {"b"}, {"c"}}, cancellable: []bool{true, true, true}, parts: [][]int{{0}, {0}, {0}},
		},
		{
			name: "a hinted get is joined by none", callRows: 8,
			ops:  []stagedOp{hinted("a"), get("b"), get("c")},
			want: [][]string{{"a"}, {"b", "c"}}, cancellable: []bool{true, false}, shared: [2]int64{1, 2}, parts: [][]int{{0}, {0, 1}},
		},
		{
			name: "a get key twice waits for the next call", callRows: 8,
			ops:  []stagedOp{get("a"), get("b"), get("a"), get("c")},
			want: [][]string{{"a", "b", "c"}, {"a"}}, cancellable: []bool{false, true}, shared: [2]int64{1, 3}, parts: [][]int{{0, 1, 2}, {0}},
		},
		{
			name: "a put row that is an own write does not count", callRows: 8,
			ops:  []stagedOp{put("a", "b"), put("b", "c"), put("d")},
			want: [][]string{{"a", "b", "b", "c", "d"}}, cancellable: []bool{false}, shared: [2]int64{1, 3}, parts: [][]int{{0, 2, 4}},
			rows: [][]contract.RowStatus{
				{contract.Ready, contract.Ready},
				{contract.NotReady, contract.Ready}, // an own write: b was being written
				{contract.Ready},
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHolding(&verdicts{}, false)
				d, reg, err := newRigWith(h, Options{Workers: 1, GetsFirst: true, JoinCalls: !tt.alone, CallRows: tt.callRows, CallBytes: tt.callBytes,
					Caps: contract.Capabilities{Put: true, Get: true, Hints: true}})
				require.NoError(t, err)
				ops := stage(t, d, tt.ops...)
				synctest.Wait()
				assert.Equal(t, tt.want, h.callKeys())
				_, _, cancellable := h.counts()
				assert.Equal(t, tt.cancellable, cancellable, "whether each call could be cancelled")
				assert.Equal(t, tt.parts, h.callParts(), "each call's Parts")
				s := d.Stats()
				assert.Equal(t, tt.shared, [2]int64{s.CallsShared, s.PartsShared}, "CallsShared, PartsShared")
				assert.Equal(t, int64(len(tt.want)), s.Calls)
				assert.Equal(t, int64(len(tt.ops)), s.Parts)
				for i, op := range ops {
					st := op.Poll(nil)
					assert.Equal(t, contract.Ended, st.Access, "operation %d", i)
					if tt.rows != nil {
						assert.Equal(t, tt.rows[i], st.Rows, "operation %d", i)
					}
				}
				teardown(t, d, reg)
			})
		})
	}
}

// An Unprovable end makes its own operation Unprovable, in a shared
// call too; a store that answers a shared call's rows as one (it reads
// Parts) marks them all, and every operation with a row in the call is
// Unprovable. RowsUnprovable counts their rows; a Drain cannot end
// them, a Recycle does, and RowsUnprovable drops to nothing.
func TestAnUnprovableEndHoldsTheOperationsOfItsRows(t *testing.T) {
	U, E := contract.Unprovable, contract.Ended
	for _, tt := range []struct {
		name        string
		join, asOne bool
		access      []contract.Access
		opsU, rowsU int64
	}{
		{"one operation a call", false, false, []contract.Access{E, U, E}, 1, 2},
		{"a shared call, one row unproven", true, false, []contract.Access{E, U, E}, 1, 2},
		{"a shared call answered as one", true, true, []contract.Access{U, U, U}, 3, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHolding(&verdicts{unprovable: map[string]bool{"b": true}}, false)
				h.asOne = tt.asOne
				d, reg, err := newRigWith(h, Options{Workers: 1, GetsFirst: true, JoinCalls: tt.join, CallRows: 8})
				require.NoError(t, err)
				ops := stage(t, d, get("a"), get("b", "x"), get("c"))
				synctest.Wait()
				for i, op := range ops {
					assert.Equal(t, tt.access[i], op.Poll(nil).Access, "operation %d", i)
				}
				s := d.Stats()
				assert.Equal(t, tt.opsU, s.OpsUnprovable)
				assert.Equal(t, tt.rowsU, s.RowsUnprovable)
				assert.Equal(t, int64(1), s.GetRows[contract.Fault], "only b's own row is a Fault")

				assert.False(t, d.Drain(context.Background()))
				assert.Equal(t, tt.rowsU, d.Stats().RowsUnprovable, "a Drain ends no Unprovable access")
				require.NoError(t, d.Recycle(context.Background()))
				for i, op := range ops {
					assert.Equal(t, E, op.Poll(nil).Access, "operation %d", i)
				}
				s = d.Stats()
				assert.Zero(t, s.OpsUnprovable)
				assert.Zero(t, s.RowsUnprovable, "no row Unprovable after the Recycle")
				assert.Equal(t, tt.opsU, s.OpsRecycled)
				assert.Equal(t, tt.rowsU, s.RowsRecycled)
				assert.Equal(t, 1, h.teardowns)
				teardown(t, d, reg)
			})
		})
	}
}

// A Cancel of an operation whose part a worker took into a shared call
// does not cancel its rows: the call carries no cancel channel of
// either operation, so the store moves every row.
func TestACancelDoesNotReachASharedCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHolding(&verdicts{}, true)
		d, reg, err := newRigWith(h, Options{Workers: 1, JoinCalls: true, CallRows: 8})
		require.NoError(t, err)
		ops := stage(t, d, get("a"), get("b"))
		synctest.Wait() // the worker holds the shared call in the store
		for _, op := range ops {
			op.Cancel()
		}
		synctest.Wait()
		for i, op := range ops {
			assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Pending}, Access: contract.Open}, op.Poll(nil), "operation %d", i)
		}
		h.gate <- struct{}{}
		synctest.Wait()
		for i, op := range ops {
			assert.Equal(t, contract.OpState{Rows: []contract.RowStatus{contract.Ready}, Access: contract.Ended}, op.Poll(nil), "operation %d", i)
		}
		assert.Equal(t, [][]string{{"a", "b"}}, h.callKeys())
		assert.Zero(t, d.Stats().GetRows[contract.Cancelled])
		teardown(t, d, reg)
	})
}

// With CallsInFlight, at most that many store calls of one direction
// run at once, whatever the workers; each direction has its own bound.
// Without it the workers bound them alone (puts: all workers but one).
func TestCallsInFlightBoundsTheCallsOfADirection(t *testing.T) {
	for _, tt := range []struct {
		name     string
		inFlight int
		dirs     []contract.Direction
		most     map[contract.Direction]int
	}{
		{"gets, no bound", 0, []contract.Direction{contract.GetDir}, map[contract.Direction]int{contract.GetDir: 4}},
		{"puts, no bound", 0, []contract.Direction{contract.PutDir}, map[contract.Direction]int{contract.PutDir: 3}},
		{"gets, one", 1, []contract.Direction{contract.GetDir}, map[contract.Direction]int{contract.GetDir: 1}},
		{"gets, two", 2, []contract.Direction{contract.GetDir}, map[contract.Direction]int{contract.GetDir: 2}},
		{"puts, two", 2, []contract.Direction{contract.PutDir}, map[contract.Direction]int{contract.PutDir: 2}},
		{"both, one each", 1, []contract.Direction{contract.GetDir, contract.PutDir},
			map[contract.Direction]int{contract.GetDir: 1, contract.PutDir: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHolding(&verdicts{}, true)
				d, reg, err := newRigWith(h, Options{Workers: 4, GetsFirst: true, CallsInFlight: tt.inFlight})
				require.NoError(t, err)
				var ops []contract.Operation
				for _, dir := range tt.dirs {
					for i := range 4 {
						b := rowAt(string(rune('a'+len(ops))), i)
						var op contract.Operation
						if dir == contract.PutDir {
							op, err = d.Put(b, nil)
						} else {
							op, err = d.Get(b, nil, nil)
						}
						require.NoError(t, err)
						ops = append(ops, op)
					}
				}
				synctest.Wait()
				inside, _, _ := h.counts()
				assert.Equal(t, tt.most, inside, "calls inside the store at first")
				for range ops {
					h.gate <- struct{}{}
					synctest.Wait()
				}
				_, most, _ := h.counts()
				assert.Equal(t, tt.most, most, "the most calls inside the store at once")
				for i, op := range ops {
					assert.Equal(t, contract.Ended, op.Poll(nil).Access, "operation %d", i)
				}
				teardown(t, d, reg)
			})
		})
	}
}

// With CallsInFlight and JoinCalls, the calls a bound holds back join
// the next call of their direction.
func TestCallsHeldByCallsInFlightJoinTheNext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHolding(&verdicts{}, true)
		d, reg, err := newRigWith(h, Options{Workers: 2, JoinCalls: true, CallsInFlight: 1, CallRows: 8})
		require.NoError(t, err)
		first, err := d.Get(rowAt("a", 0), nil, nil)
		require.NoError(t, err)
		synctest.Wait() // a is in the store
		var ops []contract.Operation
		for i, k := range []string{"b", "c"} {
			op, err := d.Get(rowAt(k, i+1), nil, nil)
			require.NoError(t, err)
			ops = append(ops, op)
		}
		synctest.Wait()
		inside, _, _ := h.counts()
		assert.Equal(t, map[contract.Direction]int{contract.GetDir: 1}, inside)
		h.gate <- struct{}{}
		synctest.Wait()
		h.gate <- struct{}{}
		synctest.Wait()
		assert.Equal(t, [][]string{{"a"}, {"b", "c"}}, h.callKeys())
		for i, op := range append(ops, first) {
			assert.Equal(t, contract.Ended, op.Poll(nil).Access, "operation %d", i)
		}
		teardown(t, d, reg)
	})
}
