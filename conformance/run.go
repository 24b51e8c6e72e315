package conformance

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kvshare/kvshare/patience"
)

// runState is what one Run keeps across its checks: every check's bench,
// for the end of the run; what each check came to, for the summary; and
// what the suite learned about the driver on the way.
type runState struct {
	h *Harness

	mu       sync.Mutex
	benches  []*bench
	outcomes []*outcome
	notes    []string  // parts of checks not run, each with its reason
	silent   string    // the check that first saw the driver change an operation without calling onChange
	waitsOut int       // waits for an operation that ran out
	last     time.Time // the last access end seen or Drain that answered true
	marks    int       // seals made, for fresh patterns
	// extensions are the lines bounds logged when they extended a wait
	// (see bench.patient).
	extensions []string
}

func newRunState(h *Harness) *runState { return &runState{h: h} }

// skipKind says why a check skipped.
type skipKind string

const (
	skipHook       skipKind = "hook missing"
	skipCapability skipKind = "capability not declared"
	skipHarness    skipKind = "harness setting"
	skipDriver     skipKind = "driver state"
	skipOther      skipKind = "other"
)

// outcome is what one check (or a direction's sub-check) came to.
type outcome struct {
	name string

	mu      sync.Mutex
	kind    skipKind // set by bench.skip just before Skipf
	skipped bool
	reason  string
	failed  bool
}

// outcomeFor starts the record of the check named name.
func (s *runState) outcomeFor(name string) *outcome {
	o := &outcome{name: name}
	s.mu.Lock()
	s.outcomes = append(s.outcomes, o)
	s.mu.Unlock()
	return o
}

// tracker is the reporter a check's bench reports through: it passes
// everything on and records what the check came to.
type tracker struct {
	reporter
	o *outcome
}

func (t tracker) Errorf(format string, args ...any) {
	t.Helper()
	t.o.fail()
	t.reporter.Errorf(format, args...)
}

func (t tracker) Fatalf(format string, args ...any) {
	t.Helper()
	t.o.fail()
	t.reporter.Fatalf(format, args...)
}

func (t tracker) Skipf(format string, args ...any) {
	t.Helper()
	t.o.mu.Lock()
	t.o.skipped, t.o.reason = true, fmt.Sprintf(format, args...)
	if t.o.kind == "" {
		t.o.kind = skipOther
	}
	t.o.mu.Unlock()
	t.reporter.Skipf(format, args...)
}

func (o *outcome) fail() {
	o.mu.Lock()
	o.failed = true
	o.mu.Unlock()
}

// note records a part of a check that was not run, and why.
func (s *runState) note(check, format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, check+": "+fmt.Sprintf(format, args...))
}

// noteOnce records, once per run, something the whole run did not do.
func (s *runState) noteOnce(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := "the run: " + fmt.Sprintf(format, args...)
	for _, x := range s.notes {
		if x == n {
			return
		}
	}
	s.notes = append(s.notes, n)
}

// event records an access end or an Unprovable access seen, or a true
// Drain: a thorough run waits out Wait after the last one before it
// looks again.
func (s *runState) event() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = time.Now()
}

// nextMark returns a number no seal of the run used.
func (s *runState) nextMark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.marks++
	return s.marks
}

// seenSilent records that check saw the driver change an operation
// without calling onChange, and reports whether it was the first.
func (s *runState) seenSilent(check string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.silent != "" {
		return false
	}
	s.silent = check
	return true
}

// silentIn returns the check that saw the driver silent, or "".
func (s *runState) silentIn() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.silent
}

// extended records a line a bound logged when it extended a wait.
func (s *runState) extended(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.extensions = append(s.extensions, line)
}

func (s *runState) waitRanOut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waitsOut++
}

func (s *runState) add(b *bench) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.benches = append(s.benches, b)
}

// finish ends the run: with Harness.Thorough it waits until Wait has
// passed since the last access end, Unprovable access and true Drain it
// saw; then it looks once more at what every check left (memory touched
// after an access ended, late callbacks, operations last seen Unprovable:
// see recheckUnprovable), reporting on r with each finding naming its
// check, unmaps the memory the checks' teardowns found free, and logs
// the summary.
func (s *runState) finish(r reporter) {
	r.Helper()
	s.mu.Lock()
	benches := append([]*bench(nil), s.benches...)
	last := s.last
	s.mu.Unlock()
	if s.h.Thorough && !last.IsZero() {
		// Wait out Wait since the last event, longer while the process is
		// starved: a late deviation delayed by a busy host still shows.
		if rest := time.Until(last.Add(s.h.Wait)); rest > 0 {
			patience.Bound{Span: rest, What: "the thorough run's closing wait", Logf: func(format string, args ...any) {
				s.extended(fmt.Sprintf(format, args...))
			}}.Wait(nil)
		}
	}
	for _, b := range benches {
		b.recheckUnprovable()
		for _, f := range b.lateFindings() {
			r.Errorf("%s: after the run: %s", b.name, f)
		}
		b.unmap(r)
	}
	r.Logf("%s", s.summary())
}

// summary describes the run: the checks run, passed, failed and
// skipped, every skip with its kind and reason, and every part of a
// check that was not run.
func (s *runState) summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var passed, failed, skipped int
	var skips []string
	for _, o := range s.outcomes {
		o.mu.Lock()
		switch {
		case o.failed:
			failed++
		case o.skipped:
			skipped++
			skips = append(skips, fmt.Sprintf("  skipped (%s): %s: %s", o.kind, o.name, o.reason))
		default:
			passed++
		}
		o.mu.Unlock()
	}
	var b strings.Builder
	mode := "normal"
	if s.h.Thorough {
		mode = "thorough"
	}
	fmt.Fprintf(&b, "conformance summary (%s): %d checks: %d passed, %d failed, %d skipped; %d waits ran out",
		mode, len(s.outcomes), passed, failed, skipped, s.waitsOut)
	if s.silent != "" {
		fmt.Fprintf(&b, "; the driver was seen not calling onChange in %s, so later waits polled", s.silent)
	}
	fmt.Fprintf(&b, "; Wait %v, %d waits extended", s.h.Wait, len(s.extensions))
	for _, l := range skips {
		b.WriteString("\n" + l)
	}
	for _, n := range s.notes {
		b.WriteString("\n  not run: " + n)
	}
	for _, l := range s.extensions {
		b.WriteString("\n  extended: " + l)
	}
	return b.String()
}
