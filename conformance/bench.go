package conformance

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/patience"
)

// check is one entry of the suite.
type check struct {
	name   string
	proves string
	// needs says which hooks and capabilities the check needs to run at
	// all; README.md lists it.
	needs string
	// perDir runs the check once per direction, as sub-checks "put" and
	// "get", each on a fresh driver; a direction the driver does not
	// serve skips.
	perDir bool
	run    func(b *bench)
}

// runCheck runs one check on fresh drivers.
func runCheck(r reporter, rs *runState, c check) {
	r.Helper()
	if !c.perDir {
		c.run(newBench(r, rs, c.name, 0))
		return
	}
	for _, dir := range []Direction{PutDir, GetDir} {
		r.Run(dir.String(), func(r reporter) {
			b := newBench(r, rs, c.name+"/"+dir.String(), dir)
			b.needDir(dir)
			c.run(b)
		})
	}
}

// bench is the state of one check: the driver, the memory lent to it,
// the registrations and operations made, and the hooks to undo. Its
// teardown drains the driver, revokes what is registered, closes the
// driver and frees memory, each only when the step before allows it.
type bench struct {
	r     reporter
	h     *Harness
	run   *runState
	name  string    // the check's name, with "/put" or "/get" for a direction's sub-check
	dir   Direction // the sub-check's direction, or 0
	keys  suiteKeys // the key maker of every batch the check builds
	names *nameBook // the names lent to the check's operations
	sub   *Subject
	d     contract.Driver
	caps  contract.Capabilities

	// pollMu serialises every Poll the suite makes of the check's
	// operations, from its goroutine or inside onChange, with what it does
	// with the snapshot (see watch.absorb).
	pollMu sync.Mutex
	// mem guards arenas, the memory of each as the suite reads and writes
	// it, seals and puts: an onChange call may seal from any goroutine.
	mem      sync.Mutex
	arenas   []*arena
	lendings []*lending
	watches  []*watch // admitted operations, and calls the suite cannot follow
	refused  []*watch // calls refused at admission
	undo     []func() // releases and resumes, run first at teardown

	drainedTrue atomic.Bool // a Drain returned true
	// moves counts snapshots of the check's operations that differed from
	// the one before: progress, which extends a wait (see patient).
	moves atomic.Uint64
	// calm: Close is about to be called, or the check ended: onChange no
	// longer polls from inside (see watch.onChange).
	calm     atomic.Bool
	closed   bool       // Close returned nil
	hung     bool       // a driver call did not return within Wait
	soft     bool       // tearing down: a hung call is reported, not fatal
	seq      int        // names regions: r1, r2, …
	probes   int        // names probe rows: probe-1, probe-2, …
	scratch  *arena     // a registered region for staging puts, used slot pair by slot pair
	scratchN int        // the slots of scratch used so far
	seals    []*seal    // memory watched since its operation's access ended
	puts     []*putSeal // put rows whose objects are watched since their access ended
	freeable []*arena   // arenas the teardown found free, unmapped at the end of the run
	snapping bool       // snapshotPuts is reading objects: no snapshot inside

	drains      int    // Drain calls made
	falseDrains int    // Drains that answered false, for the probes' names
	closes      int    // Closes that returned nil, for the lookups' names after them
	spare       *arena // a registered region no operation uses, for the probes after a false Drain
	// during, when set, says what the check stages while it makes its
	// next calls: a call that does not return in time is reported with it.
	during string
}

func newBench(r reporter, rs *runState, name string, dir Direction) *bench {
	r.Helper()
	o := rs.outcomeFor(name)
	r = tracker{reporter: r, o: o}
	h := rs.h
	names := &nameBook{}
	b := &bench{r: r, h: h, run: rs, name: name, dir: dir, keys: suiteKeys{prefix: h.KeyPrefix, book: names}, names: names}
	rs.add(b)
	sub, err := h.New()
	if err != nil {
		r.Fatalf("conformance: Harness.New: %v", err)
	}
	if sub == nil || sub.Driver == nil {
		r.Fatalf("conformance: Harness.New returned no driver")
	}
	b.sub, b.d = sub, sub.Driver
	r.Cleanup(b.teardown)
	var caps contract.Capabilities
	if _, p := b.call("Capabilities", func() { caps = b.d.Capabilities() }); p != nil {
		r.Fatalf("Capabilities panicked: %v", p)
	}
	b.caps = caps
	if h.LendDevice && !caps.DeviceMemory {
		r.Fatalf("conformance: Harness.LendDevice is set, but the driver does not declare DeviceMemory")
	}
	return b
}

// skip ends the check as a skip of the given kind (which the run's
// summary reports with the reason).
func (b *bench) skip(kind skipKind, format string, args ...any) {
	b.r.Helper()
	if t, ok := b.r.(tracker); ok {
		t.o.mu.Lock()
		t.o.kind = kind
		t.o.mu.Unlock()
	}
	b.r.Skipf(format, args...)
}

// note logs a part of the check that was not run, and why; the run's
// summary lists it too.
func (b *bench) note(format string, args ...any) {
	b.r.Helper()
	b.r.Logf("not run: "+format, args...)
	b.run.note(b.name, format, args...)
}

// kind returns the memory kind of the regions the suite lends.
func (b *bench) kind() contract.MemoryKind {
	if b.h.LendDevice {
		return contract.Device
	}
	return contract.Host
}

// call runs one driver call, bounded by the harness's Wait. A call that
// does not return in time marks the driver hung (nothing more is asked of
// it and all memory is kept) and ends the check; while tearing down it
// returns ok false instead, and the caller must not read what f would
// have set. A panic is returned.
func (b *bench) call(what string, f func()) (ok bool, panicked any) {
	b.r.Helper()
	if b.hung {
		if b.soft {
			return false, nil
		}
		b.r.Fatalf("%s: not called: the driver stopped answering earlier in the check", what)
	}
	b.snapshotPuts()
	ok, panicked = b.within(f)
	if !ok {
		b.hung = true
		why := ""
		if b.during != "" {
			why = " (" + b.during + ")"
		}
		if b.soft {
			b.r.Errorf("%s did not return within %v%s", what, b.h.Wait, why)
			return false, nil
		}
		b.r.Fatalf("%s did not return within %v%s", what, b.h.Wait, why)
	}
	b.checkpoint()
	return ok, panicked
}

// checkpoint runs after every driver call that returned: it reports
// memory watched since an access end that changed since (see seal), a
// name handed to the key maker after its operation's access ended (see
// nameBook), and what onChange calls found and could not report
// themselves.
func (b *bench) checkpoint() {
	b.r.Helper()
	for _, f := range b.memoryFindings() {
		b.r.Errorf("%s", f)
	}
	for _, f := range b.names.findings() {
		b.r.Errorf("%s", f)
	}
	for _, w := range b.watches {
		for _, f := range w.findings() {
			b.r.Errorf("%s", f)
		}
	}
}

// within runs f on a goroutine of its own and waits for it within the
// check's bound (see patient). ok is false if f did not return in time
// (it runs on, and whatever it sets must not be read); a panic of f is
// returned.
func (b *bench) within(f func()) (ok bool, panicked any) {
	result := make(chan any, 1)
	go func() {
		returned := false
		defer func() {
			if !returned {
				result <- recover()
			}
		}()
		suiteCall(f)
		returned = true
		result <- nil
	}()
	ctx, cancel := b.bound()
	defer cancel()
	select {
	case p := <-result:
		return true, p
	case <-ctx.Done():
		select {
		case p := <-result:
			return true, p
		default:
			return false, nil
		}
	}
}

// hook calls one of the harness's scenario hooks, bounded by Wait like
// a driver call, since a hook may need the driver's locks; a panic ends
// the check.
func (b *bench) hook(name string, f func()) {
	b.r.Helper()
	if _, p := b.call("the "+name+" hook", f); p != nil {
		b.r.Fatalf("the %s hook panicked: %v", name, p)
	}
}

// object returns what the harness's Object hook finds under key.
func (b *bench) object(key string) (data []byte, ok bool) {
	b.r.Helper()
	b.hook("Object", func() { data, ok = b.sub.Object(key) })
	return data, ok
}

// hasObject reports whether the Object hook finds an object under key.
func (b *bench) hasObject(key string) bool {
	b.r.Helper()
	_, ok := b.object(key)
	return ok
}

// bound returns a context that ends once the check's bound ran out for
// good (see patient).
func (b *bench) bound() (context.Context, context.CancelFunc) {
	return b.patient(b.h.Wait).Context(context.Background())
}

// brief returns a context the check means to end while the driver
// waits inside a call, to see the call give up: it ends after a quarter
// of the harness's Wait, fixed, since a row the check holds inside the
// store keeps the call waiting however slow the machine is.
func (b *bench) brief() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), b.h.Wait/4)
}

// patient returns the bound of one wait of the check's goroutine: span
// (the harness's Wait, or a share of it), extended by as much, at most
// patience.MaxExtensions times, while the process was starved or an
// operation of the check changed over the span just ended; each
// extension is logged on the check and listed in the run's summary.
func (b *bench) patient(span time.Duration) patience.Bound {
	p := b.patientAside(span)
	logf := p.Logf
	p.Logf = func(format string, args ...any) {
		logf(format, args...)
		b.r.Logf(format, args...)
	}
	return p
}

// patientAside is patient for a wait off the check's goroutine (inside
// an onChange call, which may come after the check ended): its
// extensions are listed in the run's summary only.
func (b *bench) patientAside(span time.Duration) patience.Bound {
	var seen atomic.Uint64
	seen.Store(b.moves.Load())
	return patience.Bound{
		Span: span,
		What: b.name,
		Moved: func() bool {
			n := b.moves.Load()
			return seen.Swap(n) != n
		},
		Logf: func(format string, args ...any) { b.run.extended(fmt.Sprintf(format, args...)) },
	}
}

// needDir skips the check unless the driver serves dir.
func (b *bench) needDir(dir Direction) {
	b.r.Helper()
	if !b.serves(dir) {
		b.skip(skipCapability, "the driver does not serve %vs (Capabilities)", dir)
	}
}

func (b *bench) serves(dir Direction) bool {
	return dir == PutDir && b.caps.Put || dir == GetDir && b.caps.Get
}

// dirs returns the directions the driver serves.
func (b *bench) dirs() []Direction {
	var out []Direction
	for _, d := range []Direction{PutDir, GetDir} {
		if b.serves(d) {
			out = append(out, d)
		}
	}
	return out
}

// rowName returns the name of the check's row the check calls pick: the
// check's name, "/", pick.
func (b *bench) rowName(pick string) string { return b.name + "/" + pick }

// keyOf returns the store key of a row named name: the key the suite's
// key maker builds, which [contract.RowBatch.Key] returns for that row
// of any batch the suite builds.
func (b *bench) keyOf(name string) string { return b.keys.key(name) }
