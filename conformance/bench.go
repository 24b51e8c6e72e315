package conformance

import (
	"context"
	"sync/atomic"

	"github.com/kvshare/kvshare/contract"
)

// check is one entry of the suite.
type check struct {
	name   string
	proves string
	// perDir runs the check once per direction, as sub-checks "put" and
	// "get", each on a fresh driver; a direction the driver does not
	// serve skips.
	perDir bool
	run    func(b *bench)
}

// runCheck runs one check on fresh drivers.
func runCheck(r reporter, h *Harness, c check) {
	r.Helper()
	if !c.perDir {
		c.run(newBench(r, h, c.name, 0))
		return
	}
	for _, dir := range []Direction{PutDir, GetDir} {
		r.Run(dir.String(), func(r reporter) {
			b := newBench(r, h, c.name+"/"+dir.String(), dir)
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
	r    reporter
	h    *Harness
	name string    // the check's name, with "/put" or "/get" for a direction's sub-check
	dir  Direction // the sub-check's direction, or 0
	keys suiteKeys // the key maker of every batch the check builds
	sub  *Subject
	d    contract.Driver
	caps contract.Capabilities

	arenas   []*arena
	lendings []*lending
	watches  []*watch // admitted operations, and calls the suite cannot follow
	refused  []*watch // calls refused at admission
	undo     []func() // releases and resumes, run first at teardown

	drainedTrue atomic.Bool // a Drain returned true
	closed      bool        // Close returned nil
	hung        bool        // a driver call did not return within Wait
	soft        bool        // tearing down: a hung call is reported, not fatal
	seq         int         // names regions: r1, r2, …
	probes      int         // names probe rows: probe-1, probe-2, …
	scratch     *arena      // a registered two-slot region for staging puts
}

func newBench(r reporter, h *Harness, name string, dir Direction) *bench {
	r.Helper()
	b := &bench{r: r, h: h, name: name, dir: dir, keys: suiteKeys{prefix: h.KeyPrefix}}
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
	return b
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
	ok, panicked = b.within(f)
	if !ok {
		b.hung = true
		if b.soft {
			b.r.Errorf("%s did not return within %v", what, b.h.Wait)
			return false, nil
		}
		b.r.Fatalf("%s did not return within %v", what, b.h.Wait)
	}
	return ok, panicked
}

// within runs f on a goroutine of its own and waits for it within the
// harness's Wait. ok is false if f did not return in time (it runs on,
// and whatever it sets must not be read); a panic of f is returned.
func (b *bench) within(f func()) (ok bool, panicked any) {
	result := make(chan any, 1)
	go func() {
		returned := false
		defer func() {
			if !returned {
				result <- recover()
			}
		}()
		f()
		returned = true
		result <- nil
	}()
	ctx, cancel := b.bound()
	defer cancel()
	select {
	case p := <-result:
		return true, p
	case <-ctx.Done():
		return false, nil
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

// bound returns a context that ends after the harness's Wait.
func (b *bench) bound() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), b.h.Wait)
}

// needDir skips the check unless the driver serves dir.
func (b *bench) needDir(dir Direction) {
	b.r.Helper()
	if !b.serves(dir) {
		b.r.Skipf("the driver does not serve %vs (Capabilities)", dir)
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
