package redisdrv

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/rowbatch"
	"github.com/kvshare/kvshare/scheduler"
)

// ErrRegionBusy is wrapped, next to [contract.ErrDriverRejected], by an
// Unregister refused because an operation whose access is Open or
// Unprovable has a row in the region.
var ErrRegionBusy = errors.New("redisdrv: region busy")

// Driver is a [contract.Driver] and a [contract.Looker] over one Redis
// server. See the package documentation for what it declares, promises
// and refuses. Every method is safe for concurrent use.
type Driver struct {
	route *router
	cfg   Config
	log   *slog.Logger
	pool  *scheduler.Pool[*part]

	callbacks scheduler.Callbacks // those delivered off a worker

	mu         sync.Mutex
	regions    rowbatch.Regions
	checker    rowbatch.Checker
	open       map[*operation]struct{} // access Open
	unprovable []*operation            // access Unprovable, for good
	writing    map[uint64]struct{}     // the hashes of the keys a put of this driver is writing now
	seed       maphash.Seed            // keys writing's hashes
	stats      Stats
	draining   bool
	drained    bool // the last Drain returned true
	closed     bool
	// lookupsInStore counts lookup calls inside the client now
	// (abandoned ones included); lookupsIdle is closed and replaced when
	// it drops to 0.
	lookupsInStore int
	lookupsIdle    chan struct{}
}

var (
	_ contract.Driver = (*Driver)(nil)
	_ contract.Looker = (*Driver)(nil)
)

// New returns a driver over client, which it owns from now on: Close
// closes it. The client must talk to one server (not a cluster: see
// [NewCluster]) with client-side caching off, as
// [StoreConfig.ClientOption] builds it; its connection deadline should
// be [ConnTimeout] or longer. A bad config is an error wrapping
// [ErrConfig]; the client then stays the caller's.
func New(client rueidis.Client, cfg Config) (*Driver, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: no client", ErrConfig)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return newDriver(singleRouter(client, cfg.Logger), cfg)
}

// NewCluster returns a driver over a Redis Cluster: it reads the slot
// map (CLUSTER SLOTS) from the first of opt.InitAddress (the seeds) that
// answers within ctx, then makes one client a node from opt (InitAddress
// aside, a single server each: rueidis's cluster client does not stream
// across slots), the first time a key routes there. opt should be built
// as [StoreConfig.ClientOption] builds it. Every client is the driver's:
// Close closes them. A bad config wraps [ErrConfig]; a cluster that no
// seed describes is an error naming each seed's answer; either way
// nothing is left open.
func NewCluster(ctx context.Context, opt rueidis.ClientOption, cfg Config) (*Driver, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	r, err := clusterRouter(ctx, opt, opt.InitAddress, cfg.Logger)
	if err != nil {
		return nil, err
	}
	d, err := newDriver(r, cfg)
	if err != nil {
		r.close()
	}
	return d, err
}

func newDriver(r *router, cfg Config) (*Driver, error) {
	d := &Driver{
		route:       r,
		cfg:         cfg,
		log:         cfg.Logger,
		open:        make(map[*operation]struct{}),
		writing:     make(map[uint64]struct{}),
		seed:        maphash.MakeSeed(),
		lookupsIdle: make(chan struct{}),
	}
	var err error
	d.pool, err = scheduler.New(cfg.Workers, d.run)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return d, nil
}

// Nodes returns the addresses of the cluster's nodes that serve slots,
// as the driver last read its slot map; nil for one server.
func (d *Driver) Nodes() []string {
	addrs, _ := d.route.nodes()
	return addrs
}

// Capabilities returns what the driver declares: Put, Get, Cancel,
// AbsentIsMiss and LookupInFlight; host memory only, one span per row,
// no hints, no row cap of its own (it cuts every call into parts).
func (d *Driver) Capabilities() contract.Capabilities {
	return contract.Capabilities{Put: true, Get: true, Cancel: true, AbsentIsMiss: true, LookupInFlight: true}
}

// Register records one host region. Redis needs no registration (every
// value crosses the connection), so nothing is asked of the server. It
// fails with an error wrapping [contract.ErrDriverRejected], recording
// nothing, when the driver is draining or closed, when the region's
// geometry is bad or when it is Device memory.
func (d *Driver) Register(r contract.SlotRegion) (contract.Registration, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usableLocked("register"); err != nil {
		return 0, err
	}
	if err := r.Validate(); err != nil {
		return 0, fmt.Errorf("%w: redisdrv: register: %w", contract.ErrDriverRejected, err)
	}
	if r.Kind != contract.Host {
		return 0, fmt.Errorf("%w: redisdrv: register: a %v region: Redis is driven over host memory only", contract.ErrDriverRejected, r.Kind)
	}
	return d.regions.Add(r), nil
}

// Unregister revokes a handle from Register. While an operation whose
// access is Open or Unprovable has a row in the region it fails with an
// error wrapping [contract.ErrDriverRejected] and [ErrRegionBusy]. A
// handle already revoked answers nil; one never issued is refused.
func (d *Driver) Unregister(reg contract.Registration) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.regions.Get(reg)
	switch {
	case !ok && d.regions.Revoked(reg):
		return nil
	case !ok:
		return fmt.Errorf("%w: redisdrv: unregister: registration %d was never issued", contract.ErrDriverRejected, reg)
	}
	if op, row := d.coveringLocked(r); op != nil {
		return fmt.Errorf("%w: %w: registration %d: a %v operation with access %v has row %d in the region",
			contract.ErrDriverRejected, ErrRegionBusy, reg, op.dir, op.access, row)
	}
	d.regions.Remove(reg)
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
		return fmt.Errorf("%w: redisdrv: %s: driver closed", contract.ErrDriverRejected, verb)
	case d.draining:
		return fmt.Errorf("%w: redisdrv: %s: driver drained", contract.ErrDriverRejected, verb)
	}
	return nil
}

// Close closes the client. It is allowed only after a Drain that
// returned true, with every registration revoked and no lookup inside
// the client; otherwise it fails with an error wrapping
// [contract.ErrDriverRejected] and changes nothing. Closing a closed
// driver returns nil.
func (d *Driver) Close() error {
	d.mu.Lock()
	switch {
	case d.closed:
		d.mu.Unlock()
		return nil
	case !d.drained:
		d.mu.Unlock()
		return fmt.Errorf("%w: redisdrv: close: no Drain has returned true", contract.ErrDriverRejected)
	case d.regions.Len() > 0:
		d.mu.Unlock()
		return fmt.Errorf("%w: redisdrv: close: %d registrations not revoked", contract.ErrDriverRejected, d.regions.Len())
	case d.lookupsInStore > 0:
		d.mu.Unlock()
		return fmt.Errorf("%w: redisdrv: close: %d lookups still inside the client (no call may run on a closed client)", contract.ErrDriverRejected, d.lookupsInStore)
	}
	d.closed = true
	d.mu.Unlock()
	if err := d.route.close(); err != nil {
		return fmt.Errorf("redisdrv: close: %w", err)
	}
	return nil
}
