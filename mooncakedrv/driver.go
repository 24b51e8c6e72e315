package mooncakedrv

import (
	"fmt"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// ErrRegionBusy is wrapped, next to [contract.ErrDriverRejected], by an
// Unregister refused because an operation whose access is Open or
// Unprovable has a row in the region: the kit's [drivekit.ErrRegionBusy].
var ErrRegionBusy = drivekit.ErrRegionBusy

// Driver is a [contract.Driver], [contract.Looker] and
// [contract.Recycler] over a Mooncake store client: the driver kit's
// machinery over the store calls of this package. See the package
// documentation for what it declares, promises and refuses. Every
// method is safe for concurrent use.
type Driver struct {
	*drivekit.Driver
	store *store
	cfg   Config // with its defaults
}

// New returns a driver over client, which it owns from now on: Close
// destroys it. It starts the driver's worker pool, which a Drain that
// returns true stops. A bad config is an error wrapping [ErrConfig]; the
// client is then not the driver's and stays the caller's to destroy.
func New(client mooncakesdk.Client, cfg Config) (*Driver, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: no client", ErrConfig)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &store{client: client, reopen: cfg.Reopen, log: cfg.Logger}
	kit := drivekit.New(s, drivekit.Options{
		Name: "mooncakedrv",
		// PresenceFromIndex: a lookup answers from the master's metadata
		// (see Lookup). Host memory only, one span per row, no hints, no
		// row cap of its own: the kit cuts every call into parts.
		Caps:           contract.Capabilities{Put: true, Get: true, Cancel: true, AbsentIsMiss: true, PresenceFromIndex: true},
		Workers:        cfg.Workers,
		GetsFirst:      true,
		CallRows:       cfg.RowsPerCall,
		CallBytes:      cfg.BytesPerCall,
		JoinCalls:      !cfg.CallPerPart,
		CallsInFlight:  cfg.CallsInFlight,
		LookupsInStore: MaxLookupsInStore,
		// The store keeps no key past Transfer: the SDK's key lists
		// copy them, the ledger clones, the log clones.
		ReuseKeys: true,
		Logger:    cfg.Logger,
	})
	return &Driver{Driver: kit, store: s, cfg: cfg}, nil
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
