package roundtrip

import (
	"context"
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/hostmem"
)

// lender stands in for an engine's KV cache manager: one host region of
// staging slots (package hostmem: outside the Go heap, locked where the
// system allows) lent, under a hold of its own, to a backend over its
// own driver, which the backend owns.
type lender struct {
	name    string
	mem     *hostmem.Memory
	hold    *hostmem.Hold // the loan's hold on mem
	backend *binding.Backend
	// unobserve ends what Config.Observe started (nil: nothing).
	unobserve func()
}

// newLender maps the lender's slots (locked, on 2 MiB huge pages where
// the system has them, as an engine's pinned staging memory would be),
// opens its driver from store and lends the region to a backend whose
// keys start with prefix.
func newLender(ctx context.Context, name string, store Store, cfg Config, prefix string) (*lender, error) {
	mem, err := hostmem.Map(hostmem.Geometry{SlotBytes: cfg.RowBytes, SlotCount: cfg.Rows}, hostmem.Options{Lock: true, HugePages: hostmem.HugePages2MiB})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	hold, err := mem.Hold() // the loan's own hold: Free waits for its release
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err) // refused only for memory already freed
	}
	drv, err := store.OpenDriver(ctx, name)
	if err != nil {
		hold.Release() // never lent
		return nil, errors.Join(fmt.Errorf("%s: %w", name, err), mem.Free())
	}
	// Giving back what a failed Open took gets a bound of its own, even
	// past the run's deadline.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	backend, err := binding.Open(cctx, binding.Loan{Regions: mem.Regions(), Hold: hold}, drv, binding.Config{
		KeyPrefix:       prefix,
		MaxRowsPerCall:  cfg.RowsPerCall,
		MaxBytesPerCall: cfg.BytesPerCall,
	})
	if err != nil {
		if ferr := mem.Free(); ferr != nil {
			return nil, fmt.Errorf("%s: %w (memory kept: %v)", name, err, ferr)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	l := &lender{name: name, mem: mem, hold: hold, backend: backend}
	if cfg.Observe != nil {
		l.unobserve = cfg.Observe(name, l.backend, drv)
	}
	return l, nil
}

// close ends the lender's observation, then gives everything back in
// the owner's order (Backend.Close, which closes the driver last) and
// frees the memory. Anything still held is reported and kept.
func (l *lender) close(ctx context.Context) error {
	if l.unobserve != nil {
		l.unobserve()
	}
	if err := l.backend.Close(ctx); err != nil {
		if errors.Is(err, binding.ErrHeldForGood) {
			l.hold.KeepForGood(err)
		}
		return fmt.Errorf("%s: %w (memory kept)", l.name, err)
	}
	return l.mem.Free()
}
