package memdrv

import (
	"errors"
	"log/slog"
	"sync"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
)

// ErrRegionBusy is wrapped, next to [contract.ErrDriverRejected], by an
// Unregister or UnregisterRegions refused because an operation whose
// access is Open or Unprovable has spans in the region. It is
// [drivekit.ErrRegionBusy].
var ErrRegionBusy = drivekit.ErrRegionBusy

// ErrStagedFailure is the failure a [TogetherDriver.FailNextRegistration]
// staged.
var ErrStagedFailure = errors.New("memdrv: staged registration failure")

// Driver is a [contract.Driver] over a [Store]: host memory (and Device
// memory when asked for), one region per registration, one row per
// store call, run by a small set of worker goroutines in FIFO order. It
// is a [drivekit.Driver] (admission, operations, Poll, Cancel, Drain,
// Close, Lookup, Recycle and their rules are the kit's) over memdrv's
// store client. Its capabilities: the directions of [Options], Cancel
// (unless NoCancel), AbsentIsMiss (unless NoAbsentIsMiss),
// LookupInFlight, and DeviceMemory, Hints, MultiSpan and MaxRowsPerOp
// as [Options] say.
//
// Besides the driver methods it has scenario hooks that make the store
// misbehave on purpose (see the package documentation). Every method is
// safe for concurrent use.
type Driver struct {
	*drivekit.Driver
	store *Store
	caps  contract.Capabilities
	log   *slog.Logger

	// mu guards the scenario hooks' state and the strays. It is never
	// held while the kit is called.
	mu     sync.Mutex
	scene  scene
	probes probeScene // lookups
	strays []stray    // transfers the store gave up on, still running (UnprovableGets)
	// landing is held by FinishStrays while strays write, and by a
	// Recycle's teardown while it tears them down: a Recycle returns
	// only once no stray writes any more, as a client's teardown joins
	// its transfer threads.
	landing sync.Mutex
}

var (
	_ contract.Driver   = (*Driver)(nil)
	_ contract.Looker   = (*Driver)(nil)
	_ contract.Recycler = (*Driver)(nil)
)

// New returns a driver over s with the options o. AbsentIsMiss is
// declared unless o.NoAbsentIsMiss.
func New(s *Store, o Options) *Driver {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	d := &Driver{store: s, caps: o.capabilities(), log: log}
	// FIFO workers on demand, not the gets-first pool: memdrv keeps
	// calls in admission order (one worker strictly so), and an idle
	// driver that is never drained runs no goroutine.
	d.Driver = drivekit.New(client{d}, drivekit.Options{
		Name:    "memdrv",
		Caps:    d.caps,
		Workers: o.Workers,
		Logger:  log,
	})
	return d
}

// Admitted returns the number of operations admitted in dir so far. It
// panics if dir is not PutDir or GetDir.
func (d *Driver) Admitted(dir Direction) int {
	mustBeValid(dir)
	return d.Driver.Admitted(dir)
}

// client is the driver's store client: the [drivekit.Store] the kit
// calls, with memdrv's scenario hooks in its path.
type client struct{ d *Driver }

var (
	_ drivekit.Looker   = client{}
	_ drivekit.Regions  = client{}
	_ drivekit.Teardown = client{}
)

// Keep counts a registration against the memory [Alloc] mapped that it
// covers, so that memory cannot be freed until the handle is revoked.
// A failure staged with [Driver.FailNextRegister] or
// [TogetherDriver.FailNextRegistration] comes here, after the kit's
// validation.
func (c client) Keep(rs []contract.SlotRegion, together bool) (any, error) {
	d := c.d
	d.mu.Lock()
	defer d.mu.Unlock()
	var staged error
	switch {
	case !together && d.scene.failRegister != nil:
		staged, d.scene.failRegister = d.scene.failRegister, nil
	case together && d.scene.failBatch != nil:
		live := *d.scene.failBatch
		d.scene.failBatch = nil
		staged = &contract.RegistrationError{Err: ErrStagedFailure}
		if live {
			staged = &contract.RegistrationError{Registration: 1, Err: ErrStagedFailure}
		}
	}
	var re *contract.RegistrationError
	if staged != nil && !(errors.As(staged, &re) && re.Registration != 0) {
		return nil, staged // nothing registered
	}
	return lend(rs), staged
}

// Release gives back what Keep counted.
func (c client) Release(_ []contract.SlotRegion, token any) {
	giveBack(token.([]*Memory))
}
