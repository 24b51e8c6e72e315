package conformance

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
)

// record is a reporter that records what each check reported, so a test
// can ask which check found what. Fatalf and Skipf end the check's
// goroutine as testing.T's do; cleanups run when the check ends.
type record struct {
	name   string
	parent *record

	mu       sync.Mutex
	errors   []string
	logs     []string
	skip     string
	skipped  bool
	failed   bool
	cleanups []func()
	subs     []*record
}

var _ reporter = (*record)(nil)

func (r *record) Helper() {}

func (r *record) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

func (r *record) Errorf(format string, args ...any) {
	r.mu.Lock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
	r.mu.Unlock()
	r.fail()
}

func (r *record) fail() {
	for x := r; x != nil; x = x.parent {
		x.mu.Lock()
		x.failed = true
		x.mu.Unlock()
	}
}

func (r *record) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func (r *record) Skipf(format string, args ...any) {
	r.mu.Lock()
	r.skipped, r.skip = true, fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *record) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (r *record) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

func (r *record) Run(name string, f func(reporter)) bool {
	sub := &record{name: strings.TrimPrefix(r.name+"/"+name, "/"), parent: r}
	r.mu.Lock()
	r.subs = append(r.subs, sub)
	r.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer sub.runCleanups()
		f(sub)
	}()
	<-done
	return !sub.Failed()
}

func (r *record) runCleanups() {
	for {
		r.mu.Lock()
		n := len(r.cleanups)
		if n == 0 {
			r.mu.Unlock()
			return
		}
		f := r.cleanups[n-1]
		r.cleanups = r.cleanups[:n-1]
		r.mu.Unlock()
		f()
	}
}

// find returns the record of the check (or sub-check) named name.
func (r *record) find(name string) *record {
	for _, s := range r.all() {
		if s.name == name {
			return s
		}
	}
	return nil
}

// all returns r and every record under it, depth first.
func (r *record) all() []*record {
	out := []*record{r}
	r.mu.Lock()
	subs := append([]*record(nil), r.subs...)
	r.mu.Unlock()
	for _, s := range subs {
		out = append(out, s.all()...)
	}
	return out
}

// findings returns every error recorded under r, each prefixed with the
// name of the record that reported it.
func (r *record) findings() []string {
	var out []string
	for _, s := range r.all() {
		s.mu.Lock()
		for _, e := range s.errors {
			out = append(out, s.name+": "+e)
		}
		s.mu.Unlock()
	}
	return out
}

// logged returns every log line recorded under r.
func (r *record) logged() []string {
	var out []string
	for _, s := range r.all() {
		s.mu.Lock()
		out = append(out, s.logs...)
		s.mu.Unlock()
	}
	return out
}

// rootFindings returns the errors recorded on r itself (not under it)
// that name the check (or sub-check) check: what the end of a run found
// of that check after it ended.
func (r *record) rootFindings(check string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.errors {
		if strings.HasPrefix(e, check+": ") || strings.HasPrefix(e, check+"/") {
			out = append(out, e)
		}
	}
	return out
}
