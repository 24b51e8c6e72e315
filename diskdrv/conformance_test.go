package diskdrv

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"syscall"
	"testing"

	"github.com/kvshare/kvshare/conformance"
	"github.com/kvshare/kvshare/contract"
)

// stage is the faults a test stages through a store's seam: rows held
// at gates, crashes, failed reads and lookups, a full disk.
type stage struct {
	mu      sync.Mutex
	gates   []*gate
	crash   [2]bool // by direction
	failing map[string]Fault
	looks   map[string]bool
	faults  func(op Op, dir contract.Direction, key string) Fault
}

func newStage() *stage { return &stage{failing: map[string]Fault{}, looks: map[string]bool{}} }

// seam is the store's Seam: it holds a row at Begin while a gate
// matches it, and stages the faults set.
func (st *stage) seam(op Op, dir contract.Direction, key string) Fault {
	st.mu.Lock()
	if op == Look {
		failed := st.looks[key]
		st.mu.Unlock()
		if failed {
			return Fault{Err: syscall.EIO}
		}
		return Fault{}
	}
	var held *gate
	if op == Begin {
		for _, g := range st.gates {
			if g.matches(dir, key) {
				held = g
				break
			}
		}
	}
	crash := st.crash[dirIndex(dir)]
	f, failing := st.failing[key]
	faults := st.faults
	st.mu.Unlock()
	if held != nil {
		held.block(key)
	}
	switch {
	case op == Begin && crash:
		return Fault{Panic: true}
	case op == Read && failing:
		return f
	case faults != nil:
		return faults(op, dir, key)
	}
	return Fault{}
}

func dirIndex(dir contract.Direction) int {
	if dir == contract.PutDir {
		return 0
	}
	return 1
}

// gate holds rows of one direction (of some keys, or all) at Begin.
type gate struct {
	st      *stage
	dir     contract.Direction
	keys    []string // nil: every key
	arrived chan struct{}
	open    chan struct{}
	once    sync.Once
	mu      sync.Mutex
	holding map[string]int
}

func (st *stage) hold(dir contract.Direction, keys ...string) *gate {
	g := &gate{st: st, dir: dir, keys: keys, arrived: make(chan struct{}), open: make(chan struct{}), holding: map[string]int{}}
	st.mu.Lock()
	st.gates = append(st.gates, g)
	st.mu.Unlock()
	return g
}

func (g *gate) matches(dir contract.Direction, key string) bool {
	if dir != g.dir {
		return false
	}
	select {
	case <-g.open:
		return false
	default:
	}
	return g.keys == nil || slices.Contains(g.keys, key)
}

func (g *gate) block(key string) {
	g.mu.Lock()
	g.holding[key]++
	if g.holding[key] == 1 && len(g.holding) == 1 {
		select {
		case <-g.arrived:
		default:
			close(g.arrived)
		}
	}
	g.mu.Unlock()
	<-g.open
	g.mu.Lock()
	if g.holding[key]--; g.holding[key] == 0 {
		delete(g.holding, key)
	}
	g.mu.Unlock()
}

func (g *gate) Held(ctx context.Context) error {
	select {
	case <-g.arrived:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) Release() {
	g.once.Do(func() {
		g.st.mu.Lock()
		g.st.gates = slices.DeleteFunc(g.st.gates, func(o *gate) bool { return o == g })
		g.st.mu.Unlock()
		close(g.open)
	})
}

func (g *gate) Holding(key string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.holding[key] > 0
}

// diskSubject is a fresh store in a directory of its own and a driver
// over it, with every hook the disk can stage through its seam. Stage
// lets a test reach the seam.
func diskSubject(t *testing.T, o Options, do DriverOptions) func() (*conformance.Subject, error) {
	return func() (*conformance.Subject, error) {
		st := newStage()
		o := o
		o.Seam = st.seam
		o.Logger = slog.New(slog.DiscardHandler)
		s, err := Open(t.TempDir(), o)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { _ = s.Close() })
		d := New(s, do)
		return &conformance.Subject{
			Driver: d,
			Seed:   func(key string, data []byte) { s.Seed(key, data) },
			Object: s.Object,
			Writing: func(key string) func([]byte) {
				finish, err := s.BeginWrite(key)
				if err != nil {
					t.Errorf("BeginWrite(%q): %v", key, err)
					return func([]byte) {}
				}
				return finish
			},
			Full: func() {
				used, _ := s.Used()
				s.SetCapacity(max(used, 1))
			},
			Hold:     func(dir conformance.Direction) conformance.Gate { return st.hold(dir) },
			HoldKeys: func(dir conformance.Direction, keys ...string) conformance.KeyGate { return st.hold(dir, keys...) },
			Crash: func(dir conformance.Direction) {
				st.mu.Lock()
				defer st.mu.Unlock()
				st.crash[dirIndex(dir)] = true
			},
			FailReads: func(keys ...string) {
				st.mu.Lock()
				defer st.mu.Unlock()
				for _, k := range keys {
					st.failing[k] = Fault{Err: syscall.EIO}
				}
			},
			FailLookups: func(keys ...string) {
				st.mu.Lock()
				defer st.mu.Unlock()
				for _, k := range keys {
					st.looks[k] = true
				}
			},
			Pause: d.Pause,
		}, nil
	}
}

// The conformance suite passes over the disk store: page cache and
// direct I/O (the suite's slots are 4 KiB, aligned), one row a call.
func TestConformance(t *testing.T) {
	for _, c := range []struct {
		name string
		o    Options
	}{
		{"direct", Options{}},
		{"page-cache", Options{NoDirectIO: true, Durability: None}},
	} {
		t.Run(c.name, func(t *testing.T) {
			conformance.Run(t, conformance.Harness{New: diskSubject(t, c.o, DriverOptions{Workers: 3, CallRows: 1})})
		})
	}
}
