package lender

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
)

// ErrNoDriver: Lend was given no driver, or Open's function returned
// none without an error. Nothing was mapped or lent.
var ErrNoDriver = errors.New("lender: no driver")

// Options say what memory to map and how to lend it.
type Options struct {
	// Geometry is the memory's shape: regions of SlotCount slots of
	// SlotBytes each (hostmem.Map checks it).
	Geometry hostmem.Geometry
	// Memory says how to map it: huge pages, locking, a NUMA node,
	// prefaulting. The zero value maps base pages, unlocked.
	Memory hostmem.Options
	// Backend is the backend's config: key prefix (empty means
	// "kvshare"), scope, caps, logger.
	Backend binding.Config
}

// Lender is staging memory lent to a backend: the backend's methods
// (Publish, Fetch, Lookup, Stats, Reclaim, …) with the memory beside
// them. Its Close shadows the backend's and frees the memory too.
// All methods are safe for concurrent use.
type Lender struct {
	*binding.Backend
	mem  *hostmem.Memory
	hold *hostmem.Hold

	mu   sync.Mutex
	kept *Kept // set once something is kept for good
	done bool  // everything given back
}

// Lend maps memory as o asks and lends it to a backend over d, which it
// owns from this call on, whatever happens: on a failure it drains and
// closes d and frees the memory before returning the error, all within
// ctx. A registration that may be live and cannot be revoked within
// ctx keeps the memory mapped for the life of the process: the error is
// then a [*Kept]. A nil d is refused with [ErrNoDriver].
func Lend(ctx context.Context, d contract.Driver, o Options) (*Lender, error) {
	if d == nil {
		return nil, fmt.Errorf("%w: Lend needs one", ErrNoDriver)
	}
	mem, err := hostmem.Map(o.Geometry, o.Memory)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("lender: %w", err), closeUnused(ctx, d))
	}
	return lend(ctx, mem, d, o)
}

// Open is [Lend] over the driver open returns, called once the memory
// is mapped (so a geometry refused never opens a store client). If open
// fails, the memory is freed and its error returned; open must then
// have released whatever it opened.
func Open(ctx context.Context, open func(context.Context) (contract.Driver, error), o Options) (*Lender, error) {
	if open == nil {
		return nil, fmt.Errorf("%w: Open needs a function that opens one", ErrNoDriver)
	}
	mem, err := hostmem.Map(o.Geometry, o.Memory)
	if err != nil {
		return nil, fmt.Errorf("lender: %w", err)
	}
	d, err := open(ctx)
	switch {
	case err != nil:
		return nil, errors.Join(fmt.Errorf("lender: opening the driver: %w", err), mem.Free())
	case d == nil:
		return nil, errors.Join(fmt.Errorf("%w: the open function returned none", ErrNoDriver), mem.Free())
	}
	return lend(ctx, mem, d, o)
}

// lend lends mem to a backend over d, giving both back on a failure.
func lend(ctx context.Context, mem *hostmem.Memory, d contract.Driver, o Options) (*Lender, error) {
	hold, err := mem.Hold()
	if err != nil { // only for freed memory, which mem is not
		return nil, errors.Join(fmt.Errorf("lender: %w", err), closeUnused(ctx, d), mem.Free())
	}
	b, err := binding.Open(ctx, binding.Loan{Regions: mem.Regions(), Hold: hold}, d, o.Backend)
	if err == nil {
		return &Lender{Backend: b, mem: mem, hold: hold}, nil
	}
	err = fmt.Errorf("lender: %w", err)
	var live *binding.LiveRegistrationError
	if errors.As(err, &live) {
		if uerr := live.Unbind(ctx); !hold.Released() {
			why := errors.Join(err, uerr)
			hold.KeepForGood(why)
			return nil, &Kept{Held: live.Held, Mapped: mem.Report().Bytes, Why: why}
		} else if uerr != nil { // the memory is free again; the driver did not drain
			err = errors.Join(err, uerr)
		}
	}
	return nil, errors.Join(err, mem.Free())
}

// closeUnused drains and closes a driver nothing was lent to.
func closeUnused(ctx context.Context, d contract.Driver) error {
	if !d.Drain(ctx) {
		return fmt.Errorf("lender: the driver did not drain (%w); it stays open", context.Cause(ctx))
	}
	if err := d.Close(); err != nil {
		return fmt.Errorf("lender: closing the driver: %w", err)
	}
	return nil
}

// Slot returns the bytes of one slot of one region: what the engine
// fills before a publish and reads after a fetch has settled. It panics
// for a slot or region out of range, and once Close freed the memory.
func (l *Lender) Slot(region, slot int) []byte { return l.mem.Slot(region, slot) }

// Memory returns the memory lent: its regions, its report (huge pages,
// locking, NUMA node) and its bytes.
func (l *Lender) Memory() *hostmem.Memory { return l.mem }
