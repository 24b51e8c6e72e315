package scheduler_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/scheduler"
)

// part is what the tests submit: a name to record, an owner for Cancel's
// predicate, and an optional gate the part waits on before returning.
type part struct {
	name  string
	owner int
	gate  chan struct{} // nil: the part returns at once
}

// quick returns a part that returns at once.
func quick(name string) part { return part{name: name} }

// recorder is a run function that records the order parts start in.
type recorder struct {
	mu      sync.Mutex
	started []string
}

func (r *recorder) run(p part) {
	r.mu.Lock()
	r.started = append(r.started, p.name)
	r.mu.Unlock()
	if p.gate != nil {
		<-p.gate
	}
}

// order returns the names of the parts started so far, in order.
func (r *recorder) order() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.started...)
}

// fixture is a pool whose parts are recorded, with the gates the test
// made. At the end of the test it opens every gate still shut and checks
// that Stop reports true, so a failed check never leaves a part running.
type fixture struct {
	t     *testing.T
	pool  *scheduler.Pool[part]
	rec   *recorder
	mu    sync.Mutex
	gates map[chan struct{}]bool // gate → opened
}

func newFixture(t *testing.T, workers int) *fixture {
	t.Helper()
	f := &fixture{t: t, rec: &recorder{}, gates: map[chan struct{}]bool{}}
	pool, err := scheduler.New(workers, f.rec.run)
	require.NoError(t, err)
	f.pool = pool
	t.Cleanup(func() {
		f.mu.Lock()
		for g, opened := range f.gates {
			if !opened {
				close(g)
			}
		}
		f.gates = nil
		f.mu.Unlock()
		if !pool.Stop(context.Background()) {
			t.Error("Stop at cleanup reported false")
		}
	})
	return f
}

// gated returns a part that runs until f.open(part) is called.
func (f *fixture) gated(name string) part {
	g := make(chan struct{})
	f.mu.Lock()
	f.gates[g] = false
	f.mu.Unlock()
	return part{name: name, gate: g}
}

// open lets gated parts return.
func (f *fixture) open(parts ...part) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range parts {
		if !f.gates[p.gate] {
			f.gates[p.gate] = true
			close(p.gate)
		}
	}
}

// submit queues each part with its kind, failing the test on an error.
func (f *fixture) submit(kind scheduler.Kind, parts ...part) {
	f.t.Helper()
	for _, p := range parts {
		require.NoError(f.t, f.pool.Submit(kind, p), "submit %s", p.name)
	}
}

// names returns the names of parts.
func names(parts []part) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = p.name
	}
	return out
}

// workerGoroutines counts the goroutines whose stack is in a pool
// worker's loop, whatever pool they belong to.
func workerGoroutines() int {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "kvshare/scheduler.(*Pool[...]).work(") {
			count++
		}
	}
	return count
}
