package drivekit

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/rowbatch"
	"github.com/kvshare/kvshare/scheduler"
)

// ErrRegionBusy is wrapped, next to [contract.ErrDriverRejected], by an
// Unregister or UnregisterRegions refused because an operation whose
// access is Open or Unprovable has spans in the region.
var ErrRegionBusy = errors.New("region busy")

// Driver is a [contract.Driver], [contract.Looker] and
// [contract.Recycler] over a [Store]. Every method is safe for
// concurrent use.
type Driver struct {
	store    Store
	looker   Looker     // nil: the store cannot look
	keeper   Registrar  // nil: the store needs no registration
	teardwn  Teardown   // nil: the store cannot tear down
	closer   Closer     // nil: nothing to free at Close
	keyChk   KeyChecker // nil: every key goes
	counting Counting   // nil: no counters of its own
	caps     contract.Capabilities
	name     string
	workers  int
	rows     int   // rows per store call
	bytes    int64 // bytes per store call (0: no bound)
	join     bool  // Options.JoinCalls
	lookCap  int   // Options.LookupsInStore
	log      *slog.Logger
	// tally is the join's count of the group it builds, guarded by the
	// pool's lock (see joins).
	tally tally

	mu      sync.Mutex
	regions map[contract.Registration]*registration
	// live is every region of regions, for admission: relisted when a
	// handle is issued or revoked, never modified in place.
	live    []contract.SlotRegion
	gen     uint64                // counts the relists: admission checks again when it moved
	check   rowbatch.Checker      // admission's scratch, used under mu
	lastReg contract.Registration // the last handle issued; handles only grow
	// leaving holds the handles whose revocation runs in the store now;
	// regCalls counts the store's Keep and Release calls under way.
	leaving  map[contract.Registration]*registration
	regCalls int
	queue    []part // calls no worker took yet, FIFO from head
	head     int
	// pool, when Options.GetsFirst, holds the calls instead of queue;
	// pooled counts the parts submitted to it that the kit has not yet
	// taken or dropped (Drain and Recycle wait for it to reach zero).
	pool    *scheduler.Pool[part]
	pooled  int
	running int // worker goroutines alive
	paused  int // Pause calls not resumed
	// busy counts calls a worker is running plus callbacks being
	// delivered: Drain waits for it to reach zero.
	busy       int
	open       map[*operation]struct{}
	unprovable []*operation
	// puts holds the keys this driver is putting: queued (admitted, no
	// worker took the row yet, still pending) or being written now.
	puts      putKeys
	reuseKeys bool       // Options.ReuseKeys
	spare     []*rowKeys // operations' keys kept for reuse (see keepKeysLocked)
	idleCalls []*Call    // the workers' Calls kept for reuse (see keepCallLocked)
	draining  bool
	drained   bool // the last Drain returned true
	closed    bool
	recycling bool // Recycle runs: every call is refused
	// void: a teardown left the store without fresh resources
	// (ErrRecycledClosed): every call, and every Recycle, is refused.
	void bool
	// wake is closed when busy drops, an access ends or a lookup
	// leaves the store; nil while no one waits (made by awaitLocked), so
	// that a change no one waits for costs nothing.
	wake     chan struct{}
	lookups  lookups
	stats    Stats
	lastHint contract.Hint // the last hint admitted
	bend     bend          // the deviations staged for the conformance self-test
}

var (
	_ contract.Driver   = (*Driver)(nil)
	_ contract.Looker   = (*Driver)(nil)
	_ contract.Recycler = (*Driver)(nil)
)

// registration is one handle: a region, or a batch of them from
// RegisterRegions.
type registration struct {
	regions []contract.SlotRegion
	batch   bool
	token   any // the store's, from Regions.Keep
}

// New returns a driver over s with the options o. The store's optional
// interfaces ([Looker], [Regions], [Teardown]) are found by type
// assertion.
func New(s Store, o Options) *Driver {
	o = o.normal()
	d := &Driver{
		store:     s,
		caps:      o.Caps,
		name:      o.Name,
		workers:   o.Workers,
		rows:      o.CallRows,
		bytes:     o.CallBytes,
		join:      o.JoinCalls,
		lookCap:   o.LookupsInStore,
		log:       o.Logger,
		regions:   make(map[contract.Registration]*registration),
		leaving:   make(map[contract.Registration]*registration),
		open:      make(map[*operation]struct{}),
		puts:      newPutKeys(),
		reuseKeys: o.ReuseKeys,
	}
	d.looker, _ = s.(Looker)
	d.keeper, _ = s.(Registrar)
	if r, ok := s.(Regions); ok && d.keeper == nil {
		d.keeper = releasing{r}
	}
	d.teardwn, _ = s.(Teardown)
	d.closer, _ = s.(Closer)
	d.keyChk, _ = s.(KeyChecker)
	d.counting, _ = s.(Counting)
	if o.GetsFirst {
		d.startPool(o.CallsInFlight)
	}
	return d
}

// releasing is a [Regions] as a [Registrar]: its revocation cannot
// fail.
type releasing struct{ Regions }

func (r releasing) Revoke(rs []contract.SlotRegion, token any) error {
	r.Release(rs, token)
	return nil
}

// Capabilities returns what the driver declares; the same value every
// time.
func (d *Driver) Capabilities() contract.Capabilities { return d.caps }

// refusal is an error wrapping ErrDriverRejected, naming the driver
// and the verb.
func (d *Driver) refusal(verb, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s: %s", contract.ErrDriverRejected, d.name, verb, fmt.Sprintf(format, args...))
}

// Register registers one region. It fails with an error wrapping
// [contract.ErrDriverRejected], registering nothing, when the driver is
// draining, recycling or closed, when the region's geometry is bad (the
// error wraps [contract.ErrInvalidRegion] too), or when the region is
// Device memory and the driver does not declare DeviceMemory. The
// store's [Regions.Keep] comes after those checks.
func (d *Driver) Register(r contract.SlotRegion) (contract.Registration, error) {
	return d.register("register", []contract.SlotRegion{r}, nil, false)
}

// RegisterRegions is [contract.RegionsTogether]'s, for [Together]: an
// empty batch is refused, the whole batch validated (labels name the
// regions), then registered under one handle.
func (d *Driver) registerRegions(specs []contract.RegionSpec) (contract.Registration, error) {
	const verb = "register regions"
	if len(specs) == 0 {
		d.mu.Lock()
		defer d.mu.Unlock()
		if err := d.usableLocked(verb); err != nil {
			return 0, err
		}
		return 0, d.refusal(verb, "no regions")
	}
	rs := make([]contract.SlotRegion, len(specs))
	labels := make([]string, len(specs))
	for i, s := range specs {
		rs[i], labels[i] = s.Region, s.Label
	}
	return d.register(verb, rs, labels, true)
}

// register validates rs, asks the store to keep them outside the lock
// (counted inside the store), and issues a handle, also for a failure
// that may be live (see [Regions.Keep]).
func (d *Driver) register(verb string, rs []contract.SlotRegion, labels []string, batch bool) (contract.Registration, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.checkRegionsLocked(verb, rs, labels); err != nil {
		return 0, err
	}
	if d.keeper == nil {
		return d.issueLocked(rs, batch, nil), nil
	}
	d.regCalls++
	d.mu.Unlock()
	token, err := d.keeper.Keep(rs, batch)
	d.mu.Lock()
	d.regCalls--
	d.wakeLocked()
	var re *contract.RegistrationError
	switch {
	case errors.As(err, &re) && re.Registration != 0:
		h := d.issueLocked(rs, batch, token)
		return 0, &contract.RegistrationError{Registration: h, Err: re.Err}
	case err != nil:
		return 0, err
	}
	return d.issueLocked(rs, batch, token), nil
}

// checkRegionsLocked is the validation every registration runs before
// anything is registered. labels, when given, name the regions.
func (d *Driver) checkRegionsLocked(verb string, rs []contract.SlotRegion, labels []string) error {
	if err := d.usableLocked(verb); err != nil {
		return err
	}
	for i, r := range rs {
		name := fmt.Sprintf("region %d", i)
		if labels != nil {
			name = fmt.Sprintf("region %q", labels[i])
		}
		if err := r.Validate(); err != nil {
			return fmt.Errorf("%w: %s: %s: %s: %w", contract.ErrDriverRejected, d.name, verb, name, err)
		}
		if r.Kind == contract.Device && !d.caps.DeviceMemory {
			return d.refusal(verb, "%s is device memory and the driver does not declare DeviceMemory", name)
		}
	}
	return nil
}

// usableLocked refuses work once Drain or Close was called, and while
// Recycle runs.
func (d *Driver) usableLocked(verb string) error {
	switch {
	case d.closed:
		return d.refusal(verb, "driver closed")
	case d.void:
		return d.refusal(verb, "the store has no client since a Recycle")
	case d.draining:
		return d.refusal(verb, "driver drained")
	case d.recycling:
		return d.refusal(verb, "driver recycling")
	}
	return nil
}

// issueLocked issues a new handle for rs.
func (d *Driver) issueLocked(rs []contract.SlotRegion, batch bool, token any) contract.Registration {
	d.lastReg++
	d.regions[d.lastReg] = &registration{regions: rs, batch: batch, token: token}
	d.relistLocked()
	return d.lastReg
}

// Unregister revokes a handle from Register. It fails with an error
// wrapping [contract.ErrDriverRejected] and [ErrRegionBusy], the region
// staying registered, while an operation whose access is Open or
// Unprovable has a span in it. A handle already revoked is nil (the store
// will never touch the region again); a handle this driver never issued,
// or one from RegisterRegions, is refused with ErrDriverRejected.
func (d *Driver) Unregister(reg contract.Registration) error {
	return d.unregister("unregister", reg, false)
}

func (d *Driver) unregister(verb string, reg contract.Registration, batch bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.regions[reg]
	_, leaving := d.leaving[reg]
	switch {
	case d.recycling:
		return d.refusal(verb, "driver recycling")
	case leaving:
		return d.refusal(verb, "registration %d is being revoked by another call", reg)
	case !ok && reg != 0 && reg <= d.lastReg:
		return nil
	case !ok:
		return d.refusal(verb, "registration %d was never issued", reg)
	case r.batch && !batch:
		return d.refusal(verb, "registration %d is a batch of regions; revoke it with UnregisterRegions", reg)
	case !r.batch && batch:
		return d.refusal(verb, "registration %d is a single region; revoke it with Unregister", reg)
	}
	if op, i, row := d.coveringLocked(r.regions); op != nil {
		return fmt.Errorf("%w: %w: %s: registration %d: a %s operation with access %v has row %d (key %q) in region %d",
			contract.ErrDriverRejected, ErrRegionBusy, verb, reg, op.dir, op.access, row, op.keys[row], i)
	}
	// The regions leave the live list before the store is asked, so no
	// row is admitted into them meanwhile; they come back if it refuses.
	delete(d.regions, reg)
	d.relistLocked()
	if d.keeper == nil {
		return nil
	}
	d.leaving[reg] = r
	d.regCalls++
	d.mu.Unlock()
	err := d.keeper.Revoke(r.regions, r.token)
	d.mu.Lock()
	delete(d.leaving, reg)
	d.regCalls--
	d.wakeLocked()
	if err != nil {
		d.regions[reg] = r
		d.relistLocked()
		return fmt.Errorf("%w: %s: %s: registration %d stays registered: %w", contract.ErrDriverRejected, d.name, verb, reg, err)
	}
	return nil
}

// coveringLocked finds an operation with access Open or Unprovable that
// has a span overlapping one of rs, and returns it with the index of
// that region and the operation's row in it; nil when there is none.
func (d *Driver) coveringLocked(rs []contract.SlotRegion) (*operation, int, int) {
	for i, r := range rs {
		for op := range d.open {
			if row := op.rowOf(r); row >= 0 {
				return op, i, row
			}
		}
		for _, op := range d.unprovable {
			if row := op.rowOf(r); row >= 0 {
				return op, i, row
			}
		}
	}
	return nil, 0, -1
}

// relistLocked rebuilds d.live from the registrations, in a fresh
// slice: a copy handed out earlier (see [Driver.Regions]) stays as it
// was.
func (d *Driver) relistLocked() {
	var live []contract.SlotRegion
	for _, r := range d.regions {
		live = append(live, r.regions...)
	}
	d.live = live
	d.gen++
}

// Regions returns the regions registered now, in no particular order.
func (d *Driver) Regions() []contract.SlotRegion {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.live)
}

// wakeLocked tells Drain and Recycle that something they wait for may
// have happened.
func (d *Driver) wakeLocked() {
	if d.wake != nil {
		close(d.wake)
		d.wake = nil
	}
}
