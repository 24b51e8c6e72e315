package memdrv

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/rowbatch"
)

// ErrRegionBusy is wrapped, next to [contract.ErrDriverRejected], by an
// Unregister or UnregisterRegions refused because an operation whose
// access is Open or Unprovable has spans in the region.
var ErrRegionBusy = errors.New("memdrv: region busy")

// ErrStagedFailure is the failure a [TogetherDriver.FailNextRegistration]
// staged.
var ErrStagedFailure = errors.New("memdrv: staged registration failure")

// Driver is a [contract.Driver] over a [Store]: host memory (and Device
// memory when asked for), one region per registration, rows run by a
// small set of worker goroutines of its own in FIFO order. Its
// capabilities: the directions of [Options], Cancel (unless NoCancel),
// AbsentIsMiss (unless NoAbsentIsMiss), and DeviceMemory, Hints,
// MultiSpan and MaxRowsPerOp as [Options] say.
//
// Besides the driver methods it has scenario hooks that make the store
// misbehave on purpose (see the package documentation). Every method is
// safe for concurrent use.
type Driver struct {
	store   *Store
	caps    contract.Capabilities
	workers int
	log     *slog.Logger

	mu      sync.Mutex
	regions map[contract.Registration]*registration
	// live is every region of regions, for admission: relisted when a
	// handle is issued or revoked, never modified in place.
	live    []contract.SlotRegion
	check   rowbatch.Checker      // admission's scratch, used under mu
	lastReg contract.Registration // the last handle issued; handles only grow
	queue   []task                // rows no worker took yet, FIFO from head
	head    int
	running int // worker goroutines alive
	// busy counts rows a worker is running plus callbacks being
	// delivered: Drain waits for it to reach zero.
	busy       int
	open       map[*operation]struct{}
	unprovable []*operation
	writing    map[string]struct{} // keys a put of this driver is writing now
	// queuedPuts counts, by key, the rows of admitted puts no worker has
	// taken yet and that are still pending: keys this driver is putting
	// too, for Lookup.
	queuedPuts map[string]int
	draining   bool
	drained    bool // the last Drain returned true
	closed     bool
	recycling  bool    // Recycle runs: every call is refused
	recycles   int     // recycles that ended every access
	strays     []stray // transfers the store gave up on, still running (UnprovableGets)
	// landing is held by FinishStrays while strays write, and by Recycle
	// while it tears them down: a Recycle returns only once no stray
	// writes any more, as a client's teardown joins its transfer threads.
	landing sync.Mutex
	wake    chan struct{} // closed and replaced when busy drops or an access ends
	scene   scene
	probes  probeScene // lookups
}

var _ contract.Driver = (*Driver)(nil)

// registration is one handle: a region, or a batch of them from
// RegisterRegions.
type registration struct {
	regions []contract.SlotRegion
	batch   bool
	lent    []*Memory // the Alloc'd memory it covers, counted in the ledger
}

// New returns a driver over s with the options o. AbsentIsMiss is
// declared unless o.NoAbsentIsMiss.
func New(s *Store, o Options) *Driver {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	workers := o.Workers
	if workers <= 0 {
		workers = 2
	}
	return &Driver{
		store:      s,
		caps:       o.capabilities(),
		workers:    workers,
		log:        log,
		regions:    make(map[contract.Registration]*registration),
		open:       make(map[*operation]struct{}),
		writing:    make(map[string]struct{}),
		queuedPuts: make(map[string]int),
		wake:       make(chan struct{}),
	}
}

// Capabilities returns what the driver declares; the same value every
// time.
func (d *Driver) Capabilities() contract.Capabilities { return d.caps }

// Register registers one region. It fails with an error wrapping
// [contract.ErrDriverRejected], registering nothing, when the driver is
// draining or closed, when the region's geometry is bad (the error wraps
// [contract.ErrInvalidRegion] too), or when the region is Device memory
// and the driver does not declare DeviceMemory. A failure staged with
// [Driver.FailNextRegister] comes after those checks.
func (d *Driver) Register(r contract.SlotRegion) (contract.Registration, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.checkRegionsLocked("register", []contract.SlotRegion{r}, nil); err != nil {
		return 0, err
	}
	if staged := d.scene.failRegister; staged != nil {
		d.scene.failRegister = nil
		return d.stagedRegisterLocked(r, staged)
	}
	return d.registerLocked(false, r), nil
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
			return fmt.Errorf("%w: memdrv: %s: %s: %w", contract.ErrDriverRejected, verb, name, err)
		}
		if r.Kind == contract.Device && !d.caps.DeviceMemory {
			return fmt.Errorf("%w: memdrv: %s: %s is device memory and the driver does not declare DeviceMemory",
				contract.ErrDriverRejected, verb, name)
		}
	}
	return nil
}

// usableLocked refuses work once Drain or Close was called.
func (d *Driver) usableLocked(verb string) error {
	switch {
	case d.closed:
		return fmt.Errorf("%w: memdrv: %s: driver closed", contract.ErrDriverRejected, verb)
	case d.draining:
		return fmt.Errorf("%w: memdrv: %s: driver drained", contract.ErrDriverRejected, verb)
	case d.recycling:
		return fmt.Errorf("%w: memdrv: %s: driver recycling", contract.ErrDriverRejected, verb)
	}
	return nil
}

// registerLocked issues a new handle for rs and counts it against the
// memory it covers, so that memory cannot be freed until the handle is
// revoked.
func (d *Driver) registerLocked(batch bool, rs ...contract.SlotRegion) contract.Registration {
	d.lastReg++
	d.regions[d.lastReg] = &registration{regions: rs, batch: batch, lent: lend(rs)}
	d.relistLocked()
	return d.lastReg
}

// stagedRegisterLocked fails a registration as staged: a
// [*contract.RegistrationError] with a non-zero handle registers the
// region for real and reports the real handle; anything else registers
// nothing and is returned as it is.
func (d *Driver) stagedRegisterLocked(r contract.SlotRegion, staged error) (contract.Registration, error) {
	var re *contract.RegistrationError
	if errors.As(staged, &re) && re.Registration != 0 {
		h := d.registerLocked(false, r)
		return 0, &contract.RegistrationError{Registration: h, Err: re.Err}
	}
	return 0, staged
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
	switch {
	case d.recycling:
		return fmt.Errorf("%w: memdrv: %s: driver recycling", contract.ErrDriverRejected, verb)
	case !ok && reg != 0 && reg <= d.lastReg:
		return nil
	case !ok:
		return fmt.Errorf("%w: memdrv: %s: registration %d was never issued", contract.ErrDriverRejected, verb, reg)
	case r.batch && !batch:
		return fmt.Errorf("%w: memdrv: %s: registration %d is a batch of regions; revoke it with UnregisterRegions",
			contract.ErrDriverRejected, verb, reg)
	case !r.batch && batch:
		return fmt.Errorf("%w: memdrv: %s: registration %d is a single region; revoke it with Unregister",
			contract.ErrDriverRejected, verb, reg)
	}
	if op, i, row := d.coveringLocked(r.regions); op != nil {
		return fmt.Errorf("%w: %w: %s: registration %d: a %s operation with access %v has row %d (key %q) in region %d",
			contract.ErrDriverRejected, ErrRegionBusy, verb, reg, op.dir, op.access, row, op.keys[row], i)
	}
	delete(d.regions, reg)
	d.relistLocked()
	giveBack(r.lent)
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
}

// liveLocked returns a copy of every registered region, nil for none.
func (d *Driver) liveLocked() []contract.SlotRegion {
	return slices.Clone(d.live)
}

// closeFirst says what an owner closing the driver too early must do.
const closeFirst = "close the backend over this driver first: binding's Backend.Close, or Shutdown until it answers no labels"

// Close releases the driver. It is allowed only after a Drain that
// returned true, with every registration revoked; otherwise it fails
// with an error wrapping [contract.ErrDriverRejected] and changes
// nothing. Closing a closed driver returns nil.
func (d *Driver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.closed:
		return nil
	case !d.drained:
		return fmt.Errorf("%w: memdrv: close: no Drain has returned true (%s)", contract.ErrDriverRejected, closeFirst)
	case len(d.regions) > 0:
		return fmt.Errorf("%w: memdrv: close: %d registrations not revoked (%s)", contract.ErrDriverRejected, len(d.regions), closeFirst)
	case d.probes.inside > 0:
		return fmt.Errorf("%w: memdrv: close: %d lookups still inside the store", contract.ErrDriverRejected, d.probes.inside)
	}
	d.closed = true
	return nil
}

// wakeLocked tells Drain that something it waits for may have happened.
func (d *Driver) wakeLocked() {
	close(d.wake)
	d.wake = make(chan struct{})
}
