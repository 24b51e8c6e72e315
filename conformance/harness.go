package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/patience"
)

// Harness is what a driver's test hands to [Run]: how to build a fresh
// driver, and the knobs of the suite. Only New is required.
type Harness struct {
	// New builds a fresh driver, with the scenario hooks the harness can
	// stage on it. Run calls it once per check, from the check's
	// goroutine, before the check does anything else; nothing else of
	// the driver is shared between checks. An error fails that check.
	//
	// The suite drains the driver, unregisters what it registered and
	// calls Close at the end of the check when it can prove that every
	// operation's access ended; otherwise it leaves the driver, and the
	// memory it lent it, alone.
	New func() (*Subject, error)

	// SlotBytes is the size of every slot of the regions the suite lends
	// the driver; 0 means 4096. Every object the suite stores is at most
	// two slots long.
	SlotBytes int64

	// Wait bounds every wait of the suite (an operation settling, a gate
	// holding a row, Drain, a call that must return at once); 0 means 10
	// seconds. Run multiplies it by the environment's KVSHARE_WAIT_SCALE
	// (default 1), so a whole run on a slow machine is made more patient
	// without touching code. A wait that runs out is extended by Wait, at
	// most three times, only while the process was starved of CPU or an
	// operation of the check changed over the Wait just ended (package
	// patience; each extension is logged). A driver that has not done
	// what a check waits for within its bound fails that check rather
	// than hanging it.
	Wait time.Duration

	// Only names the checks to run (see [Checks]); empty means all. A
	// name that is no check fails Run. `go test -run 'TestX/extents'`
	// selects checks too, since every check is a subtest named after it.
	Only []string

	// KeyPrefix starts every store key the suite uses; empty means
	// "kvshare-conformance/<random>/", fresh for each Run, so that runs
	// against a shared store never meet each other's keys. It must not
	// hold a NUL byte. A row's name is the check's name + "/" + a name
	// the check picks; its key, which the suite's own key maker builds
	// (see the module's README.md, "Names and keys"), is KeyPrefix +
	// the name, escaped, + a fill of '~'. The hooks take keys.
	KeyPrefix string

	// Thorough also runs what can only be caught by waiting out Wait:
	// before the run ends it waits until Wait has passed since the last
	// access end or Unprovable access it saw and the last Drain that
	// answered true, and then looks once more for memory touched after
	// an access ended, for onChange calls after a Drain that answered
	// true, and at every operation last seen Unprovable (it must still
	// be, Drain must answer false, its regions stay registered); and
	// second-put waits, within Wait, for a second put while the first
	// is still held. A thorough run takes about one Wait longer (more
	// for a driver with a single worker). The suite's own self-test runs
	// thorough.
	Thorough bool

	// LendDevice makes the suite label every region it lends Device
	// instead of Host; the memory is still host memory the suite maps.
	// It is for a driver that declares DeviceMemory and moves host
	// memory labelled Device (memdrv does), so that the device-kind
	// paths of registration and admission run. Run refuses it for a
	// driver that does not declare DeviceMemory.
	LendDevice bool
}

// Subject is one driver under test and the scenario hooks a harness can
// stage on it. A nil hook is one the harness cannot stage: the checks
// that need it skip, saying so. The hooks, and the functions they
// return (Gate's methods, resume, finish), are called one at a time, in
// the order the check needs them, each on a goroutine of the suite's own
// and bounded by Wait like a driver call, since a hook may need the
// driver's locks: one that does not return in time marks the driver
// hung. The one call that may overlap another is Gate.Release, which
// drain-waits-for-rows makes while Drain runs, the moment Drain looks at
// its context. Release, resume and finish may be called more than once.
// A hook that changes how the driver behaves applies from the moment it
// is called until the end of the check (the driver is never reused).
//
// A key a hook takes or finds is a store key, exactly as the batch's key
// maker builds it from the row's name ([contract.RowBatch.Key]): the
// harness addresses its store by key, and a driver stores and reads
// every row under exactly that key.
type Subject struct {
	// Driver is the driver under test, fresh, with nothing registered.
	Driver contract.Driver

	// Seed stores a complete object under key in the driver's store, as
	// another writer would. It lets the suite test gets of a driver that
	// cannot put, and objects of the wrong size.
	Seed func(key string, data []byte)

	// Object returns a copy of the complete object stored under key, and
	// whether there is one. It lets the suite check puts of a driver that
	// cannot get.
	Object func(key string) ([]byte, bool)

	// Writing makes another writer start writing key: until finish is
	// called, the key exists in the store but is not readable, and this
	// driver's gets and puts of it end NotReady. finish(data) completes
	// the object with data; finish(nil) abandons it. finish is
	// idempotent.
	Writing func(key string) (finish func(data []byte))

	// Full makes the store refuse every later put on its own terms: such
	// rows end Declined.
	Full func()

	// Hold makes every row in dir, from now on, block inside the store
	// call (taken by a worker, its access open) until the gate is
	// released.
	Hold func(dir Direction) Gate

	// HoldKeys makes every row in dir whose key is one of keys, from now
	// on, block inside the store call as Hold does, until the gate is
	// released; the rows of other keys run on. Where the driver cannot
	// run a row while a held one blocks (one store call carries both, or
	// every worker is blocked at a gate), that row is held too, and the
	// gate's Holding says so.
	HoldKeys func(dir Direction, keys ...string) KeyGate

	// Crash makes every later store call in dir crash (a panic inside
	// the driver's worker, a lost connection): the driver must turn it
	// into row Faults and still end or give up access.
	Crash func(dir Direction)

	// FailReads makes every later get of these keys fail in the store:
	// the row ends Fault, and its slot may have been written.
	FailReads func(keys ...string)

	// UnprovableGets makes every later get of these keys end Fault with
	// access Unprovable: the store cannot prove the transfer stopped.
	UnprovableGets func(keys ...string)

	// FinishStrays lets every transfer the store gave up on (the gets of
	// UnprovableGets) run to its end, as a store that was only slow
	// would: a transfer the driver has not torn down writes its row's
	// memory now. The recycle checks call it after a Recycle, or while
	// one waits for a row inside the store, to show a Recycle that
	// reported access Ended without ending it.
	FinishStrays func()

	// Pause stops the driver's workers from taking new rows until resume
	// is called: operations submitted meanwhile are admitted and left
	// unstarted. resume is idempotent.
	Pause func() (resume func())

	// HoldLookups makes every later lookup ([contract.Looker]) that asks
	// about one of keys block inside the store call, until the gate is
	// released: the lookup's context may end meanwhile, and the call
	// stays inside the store until then. Held says a lookup is blocked
	// at the gate. A harness whose store cannot tell lookups apart may
	// hold every later lookup, but never a put or a get (a driver's own
	// exists-check of a put included) of keys other than these.
	HoldLookups func(keys ...string) Gate

	// FailLookups makes the store fail every later presence call (a
	// lookup's) that asks about one of keys: it answers nothing for
	// those keys. A harness whose store fails a call as a whole may
	// leave the other names of that call unanswered too, but fails no
	// put's or get's call of other keys.
	FailLookups func(keys ...string)

	// FailNextRegistration makes the store fail the driver's next
	// registration (RegisterRegions when batch is set, else Register) in
	// a way that may leave it live: the store may have taken the memory
	// (a call that crashed or timed out after it took effect). Only that
	// one registration fails; later ones are served as before.
	FailNextRegistration func(batch bool)
}

// Direction is the direction of a row: a put (slot to store) or a get
// (store to slot). It is the contract's [contract.Direction].
type Direction = contract.Direction

const (
	// PutDir is a put: the slot is read and the store written.
	PutDir = contract.PutDir
	// GetDir is a get: the store is read and the slot written.
	GetDir = contract.GetDir
)

// Gate is a hold on every row of one direction (see [Subject.Hold]).
type Gate interface {
	// Held waits within ctx until at least one row is blocked on the
	// gate, and returns ctx's error if none is.
	Held(ctx context.Context) error
	// Release unblocks every blocked row and stops holding. It is
	// idempotent.
	Release()
}

// KeyGate is a hold on the rows of some keys (see [Subject.HoldKeys]).
type KeyGate interface {
	Gate
	// Holding reports whether the gate keeps the row of key from ending
	// now: the row is blocked at it, or rides on a store call blocked at
	// it (a driver whose one call carries several rows), or waits for a
	// worker while every worker is blocked at a gate. A harness that
	// cannot tell answers false for a row it did not hold.
	Holding(key string) bool
}

// Run runs the conformance checks against drivers the harness builds,
// each check as a subtest of t named after it (see [Checks]). Like
// [testing/fstest.TestFS] it reports every finding, not just the first:
// a check that finds a violation goes on where the driver's state
// allows, and every check runs whatever the others found.
//
// A check skips, with its reason, when the driver's capabilities or the
// harness's hooks cannot stage it. A check never frees memory an
// admitted operation may still touch: memory whose release it cannot
// justify is kept for the life of the process and logged.
//
// When every check has run, Run looks once more (after waiting out Wait,
// with Harness.Thorough) for memory touched after an access ended and
// for late callbacks, reports what it finds on t, each finding naming
// its check, unmaps the memory it may free, and logs a summary: the
// checks run, passed, failed and skipped, each skip with its reason.
func Run(t *testing.T, h Harness) {
	t.Helper()
	run(testReporter{t}, h)
}

// run is Run over any reporter.
func run(r reporter, h Harness) {
	r.Helper()
	if h.New == nil {
		r.Errorf("conformance: Harness.New is nil")
		return
	}
	scale, err := patience.Scale()
	if err != nil {
		r.Errorf("conformance: %v", err)
		return
	}
	h = h.withDefaults(scale)
	if strings.IndexByte(h.KeyPrefix, 0) >= 0 {
		r.Errorf("conformance: Harness.KeyPrefix %q holds a NUL byte, which no key may", h.KeyPrefix)
		return
	}
	for _, name := range h.Only {
		if !slices.ContainsFunc(suite, func(c check) bool { return c.name == name }) {
			r.Errorf("conformance: Harness.Only names %q, which is no check", name)
		}
	}
	rs := newRunState(&h)
	for _, c := range suite {
		if len(h.Only) > 0 && !slices.Contains(h.Only, c.name) {
			continue
		}
		r.Run(c.name, func(r reporter) { runCheck(r, rs, c) })
	}
	rs.finish(r)
}

func (h Harness) withDefaults(scale float64) Harness {
	if h.SlotBytes <= 0 {
		h.SlotBytes = 4096
	}
	if h.Wait <= 0 {
		h.Wait = 10 * time.Second
	}
	h.Wait = patience.ScaledBy(h.Wait, scale)
	if h.KeyPrefix == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		h.KeyPrefix = "kvshare-conformance/" + hex.EncodeToString(b[:]) + "/"
	}
	return h
}

// Check describes one check of the suite.
type Check struct {
	// Name is the subtest name, and what Harness.Only takes.
	Name string
	// Proves says in one line what a pass shows about the driver.
	Proves string
	// Needs says which hooks of the [Subject] and which Capabilities
	// the check needs to run at all (it skips without them, saying
	// which), or "nothing".
	Needs string
}

// Checks returns every check of the suite, in the order Run runs them.
func Checks() []Check {
	out := make([]Check, len(suite))
	for i, c := range suite {
		out[i] = Check{Name: c.name, Proves: c.proves, Needs: c.needs}
	}
	return out
}
