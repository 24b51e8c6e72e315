package redisdrv

import (
	"context"
	"fmt"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
)

// ErrRegionBusy is wrapped, next to [contract.ErrDriverRejected], by an
// Unregister refused because an operation whose access is Open or
// Unprovable has a row in the region: the kit's [drivekit.ErrRegionBusy].
var ErrRegionBusy = drivekit.ErrRegionBusy

// Driver is a [contract.Driver], [contract.Looker] and
// [contract.Recycler] over one Redis server or a Redis Cluster: the
// driver kit's machinery over the pipelines of this package. See the
// package documentation for what it declares, promises and refuses.
// Every method is safe for concurrent use.
type Driver struct {
	*drivekit.Driver
	store *store
	cfg   Config // with its defaults
}

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
	s := &store{route: r, cfg: cfg, log: cfg.Logger}
	kit := drivekit.New(s, drivekit.Options{
		Name: "redisdrv",
		// Host memory only, one span per row, no hints, no row cap of its
		// own: the kit cuts every call into parts. A Redis value is whole
		// the moment it exists, so InFlight is this driver's own puts
		// alone: LookupInFlight.
		Caps:           contract.Capabilities{Put: true, Get: true, Cancel: true, AbsentIsMiss: true, LookupInFlight: true},
		Workers:        cfg.Workers,
		GetsFirst:      true,
		CallRows:       cfg.RowsPerCall,
		CallBytes:      cfg.BytesPerCall,
		LookupsInStore: MaxLookupsInStore,
		Logger:         cfg.Logger,
	})
	return &Driver{Driver: kit, store: s, cfg: cfg}, nil
}

// Nodes returns the addresses of the cluster's nodes that serve slots,
// as the driver last read its slot map; nil for one server.
func (d *Driver) Nodes() []string {
	addrs, _ := d.store.route.nodes()
	return addrs
}
