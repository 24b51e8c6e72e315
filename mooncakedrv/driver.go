package mooncakedrv

import (
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/rowbatch"
	"github.com/kvshare/kvshare/scheduler"
)

// ErrRegionBusy is wrapped, next to [contract.ErrDriverRejected], by an
// Unregister refused because an operation whose access is Open or
// Unprovable has a row in the region.
var ErrRegionBusy = errors.New("mooncakedrv: region busy")

// Driver is a [contract.Driver] over a Mooncake store client. See the
// package documentation for what it declares, promises and refuses.
// Every method is safe for concurrent use.
type Driver struct {
	client mooncakesdk.Client
	cfg    Config
	log    *slog.Logger
	pool   *scheduler.Pool[*part]
	// kept are parts given back, with their buffers, for reuse.
	partsMu sync.Mutex
	kept    []*part

	callbacks scheduler.Callbacks // those delivered off a worker

	mu         sync.Mutex
	regions    rowbatch.Regions
	leaving    map[contract.Registration]contract.SlotRegion // being unregistered now
	checker    rowbatch.Checker
	open       map[*operation]struct{} // access Open
	unprovable []*operation            // access Unprovable, for good
	writing    map[uint64]struct{}     // the hashes of the keys a put of this driver is writing now
	seed       maphash.Seed            // keys writing's hashes
	ledger     ledger
	stats      Stats
	draining   bool
	drained    bool // the last Drain returned true
	closed     bool
	recycling  bool // Recycle runs: every call is refused
	// void: a Recycle destroyed the client and could not have a fresh
	// one: nothing is registered, every call is refused (see Recycle).
	void bool
	// lookupsInStore counts lookup probes inside the SDK now (abandoned
	// ones included); lookupsIdle is closed and replaced when it drops
	// to 0.
	lookupsInStore int
	lookupsIdle    chan struct{}
	// admitting counts Put and Get calls that still queue parts after
	// their first; admitIdle is closed and replaced when it drops to 0.
	admitting int
	admitIdle chan struct{}
}

var _ contract.Driver = (*Driver)(nil)

// New returns a driver over client, which it owns from now on: Close
// destroys it. It starts the driver's worker pool. A bad config is an
// error wrapping [ErrConfig]; the client is then not the driver's and
// stays the caller's to destroy.
func New(client mooncakesdk.Client, cfg Config) (*Driver, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: no client", ErrConfig)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	d := &Driver{
		client:      client,
		cfg:         cfg,
		log:         cfg.Logger,
		leaving:     make(map[contract.Registration]contract.SlotRegion),
		open:        make(map[*operation]struct{}),
		writing:     make(map[uint64]struct{}),
		seed:        maphash.MakeSeed(),
		lookupsIdle: make(chan struct{}),
		admitIdle:   make(chan struct{}),
	}
	d.pool, err = scheduler.NewGrouped(cfg.Workers, d.grouping(), d.run)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return d, nil
}

// Capabilities returns what the driver declares: Put, Get, Cancel,
// AbsentIsMiss and PresenceFromIndex (a lookup answers from the master's
// metadata, which keeps listing a provider that stopped answering until
// its client_ttl runs out: see [Driver.Lookup]); host memory only, one
// span per row, no hints, and no row cap of its own (it cuts every call
// into parts itself).
func (d *Driver) Capabilities() contract.Capabilities {
	return contract.Capabilities{Put: true, Get: true, Cancel: true, AbsentIsMiss: true, PresenceFromIndex: true}
}

// Register registers one host region with the store's transfer engine
// (one register_buffer call over the whole region). It fails with an
// error wrapping [contract.ErrDriverRejected], registering nothing, when
// the driver is draining or closed, when the region's geometry is bad,
// when the region is Device memory (before the store is asked), or when
// the store refuses the buffer. A panic inside the SDK may have left the
// buffer registered: it is a [*contract.RegistrationError] whose handle
// must be revoked.
func (d *Driver) Register(r contract.SlotRegion) (contract.Registration, error) {
	d.mu.Lock()
	err := d.usableLocked("register")
	d.mu.Unlock()
	switch {
	case err != nil:
		return 0, err
	case r.Validate() != nil:
		return 0, fmt.Errorf("%w: mooncakedrv: register: %w", contract.ErrDriverRejected, r.Validate())
	case r.Kind != contract.Host:
		return 0, fmt.Errorf("%w: mooncakedrv: register: a %v region: Mooncake Store is driven over host memory only", contract.ErrDriverRejected, r.Kind)
	}
	panicked, err := sdkCall(func() error { return d.client.RegisterBuffer(r.Base, uint64(r.Len)) })
	d.mu.Lock()
	defer d.mu.Unlock()
	if panicked != nil {
		// The buffer may be registered: hand out a handle that Unregister
		// can revoke.
		h := d.regions.Add(r)
		return 0, &contract.RegistrationError{Registration: h, Err: fmt.Errorf("mooncakedrv: register_buffer panicked: %v", panicked)}
	}
	if err != nil {
		return 0, fmt.Errorf("%w: mooncakedrv: register: %w", contract.ErrDriverRejected, err)
	}
	return d.regions.Add(r), nil
}

// Unregister revokes a handle from Register (one unregister_buffer call).
// While an operation whose access is Open or Unprovable has a row in the
// region it fails with an error wrapping [contract.ErrDriverRejected] and
// [ErrRegionBusy], and asks the store nothing. A store that refuses, or
// an SDK that panics, leaves the region registered: the error wraps
// ErrDriverRejected and the caller asks again. A handle already revoked
// answers nil; one never issued is refused.
func (d *Driver) Unregister(reg contract.Registration) error {
	d.mu.Lock()
	r, ok := d.regions.Get(reg)
	_, leaving := d.leaving[reg]
	switch {
	case d.recycling:
		d.mu.Unlock()
		return fmt.Errorf("%w: mooncakedrv: unregister: driver recycling its client", contract.ErrDriverRejected)
	case d.void && ok:
		// The client the region was registered with is destroyed, and
		// there is no other: nothing is registered any more.
		d.regions.Remove(reg)
		d.mu.Unlock()
		return nil
	case leaving:
		d.mu.Unlock()
		return fmt.Errorf("%w: mooncakedrv: unregister: registration %d is being revoked by another call", contract.ErrDriverRejected, reg)
	case !ok && d.regions.Revoked(reg):
		d.mu.Unlock()
		return nil
	case !ok:
		d.mu.Unlock()
		return fmt.Errorf("%w: mooncakedrv: unregister: registration %d was never issued", contract.ErrDriverRejected, reg)
	}
	if op, row := d.coveringLocked(r); op != nil {
		d.mu.Unlock()
		return fmt.Errorf("%w: %w: registration %d: a %v operation with access %v has row %d in the region",
			contract.ErrDriverRejected, ErrRegionBusy, reg, op.dir, op.accessLocked(), row)
	}
	// The region leaves the live list before the store is asked, so no
	// row can be admitted into it while the lock is released; it comes
	// back if the store refuses.
	d.regions.Remove(reg)
	d.leaving[reg] = r
	d.mu.Unlock()
	panicked, err := sdkCall(func() error { return d.client.UnregisterBuffer(r.Base) })
	d.mu.Lock()
	delete(d.leaving, reg)
	if panicked != nil || err != nil {
		d.regions.Restore(reg, r)
	}
	d.mu.Unlock()
	if panicked != nil {
		return fmt.Errorf("%w: mooncakedrv: unregister_buffer panicked: %v", contract.ErrDriverRejected, panicked)
	}
	if err != nil {
		return fmt.Errorf("%w: mooncakedrv: unregister: %w", contract.ErrDriverRejected, err)
	}
	return nil
}

// coveringLocked finds an operation with access Open or Unprovable that
// has a row in r, and that row; nil when there is none.
func (d *Driver) coveringLocked(r contract.SlotRegion) (*operation, int) {
	for op := range d.open {
		if row := op.rowIn(r); row >= 0 {
			return op, row
		}
	}
	for _, op := range d.unprovable {
		if row := op.rowIn(r); row >= 0 {
			return op, row
		}
	}
	return nil, 0 // the row means nothing without an operation
}

// usableLocked refuses work once Drain or Close was called.
func (d *Driver) usableLocked(verb string) error {
	switch {
	case d.closed:
		return fmt.Errorf("%w: mooncakedrv: %s: driver closed", contract.ErrDriverRejected, verb)
	case d.draining:
		return fmt.Errorf("%w: mooncakedrv: %s: driver drained", contract.ErrDriverRejected, verb)
	case d.recycling:
		return fmt.Errorf("%w: mooncakedrv: %s: driver recycling its client", contract.ErrDriverRejected, verb)
	case d.void:
		return fmt.Errorf("%w: mooncakedrv: %s: driver has no client since a Recycle", contract.ErrDriverRejected, verb)
	}
	return nil
}

// Close destroys the client. It is allowed only after a Drain that
// returned true, with every registration revoked; otherwise it fails
// with an error wrapping [contract.ErrDriverRejected] and changes
// nothing. Closing a closed driver returns nil.
func (d *Driver) Close() error {
	d.mu.Lock()
	switch {
	case d.closed:
		d.mu.Unlock()
		return nil
	case !d.drained:
		d.mu.Unlock()
		return fmt.Errorf("%w: mooncakedrv: close: no Drain has returned true", contract.ErrDriverRejected)
	case d.regions.Len()+len(d.leaving) > 0:
		d.mu.Unlock()
		return fmt.Errorf("%w: mooncakedrv: close: %d registrations not revoked", contract.ErrDriverRejected, d.regions.Len()+len(d.leaving))
	case d.lookupsInStore > 0:
		d.mu.Unlock()
		return fmt.Errorf("%w: mooncakedrv: close: %d lookups still inside the store (no call may run on a destroyed client)", contract.ErrDriverRejected, d.lookupsInStore)
	}
	d.closed = true
	void := d.void
	d.mu.Unlock()
	if void {
		return nil // a Recycle destroyed the client already
	}
	panicked, err := sdkCall(d.client.Destroy)
	if panicked != nil {
		return fmt.Errorf("mooncakedrv: close: destroy panicked: %v", panicked)
	}
	if err != nil {
		return fmt.Errorf("mooncakedrv: close: %w", err)
	}
	return nil
}

// sdkCall runs one SDK call, turning a panic inside the binding into a
// value: a panic is a failure the driver must account for, never a crash
// of the worker that holds the pool's promise.
func sdkCall(f func() error) (panicked any, err error) {
	defer func() {
		if p := recover(); p != nil {
			panicked, err = p, nil
		}
	}()
	return nil, f()
}
