package roundtrip

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// lender stands in for an engine's KV cache manager: one host region of
// staging slots (memory outside the Go heap), lent under a hold to a
// backend over its own driver.
type lender struct {
	name    string
	mem     *memdrv.Memory
	drv     contract.Driver
	backend *binding.Backend
	hold    *hold
	// unobserve ends what Config.Observe started (nil: nothing).
	unobserve func()
}

// hold is the lender's hold on its region: the memory may be freed only
// after the binding released it.
type hold struct{ released atomic.Bool }

func (h *hold) Release() { h.released.Store(true) }

// newLender maps the lender's slots, opens its driver from store and
// binds the region to a backend whose keys start with prefix.
func newLender(ctx context.Context, name string, store Store, cfg Config, prefix string) (*lender, error) {
	mem, err := memdrv.Alloc(cfg.RowBytes, cfg.Rows, contract.Host)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	drv, err := store.OpenDriver(ctx, name)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("%s: %w", name, err), mem.Free())
	}
	l := &lender{name: name, mem: mem, drv: drv, hold: &hold{}}
	// Giving back what was taken gets a bound of its own, even past the
	// run's deadline.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	regions, err := binding.Bind(l.drv, []contract.SlotRegion{mem.Region}, l.hold)
	if err != nil {
		return nil, l.abandon(cctx, fmt.Errorf("%s: bind: %w", name, err))
	}
	l.backend, err = binding.New(regions, binding.Config{
		KeyPrefix:       prefix,
		MaxRowsPerCall:  cfg.RowsPerCall,
		MaxBytesPerCall: cfg.BytesPerCall,
	})
	if err != nil {
		if uerr := regions.Unbind(cctx); uerr != nil {
			return nil, fmt.Errorf("%s: %w (and unbinding: %v; memory kept)", name, err, uerr)
		}
		return nil, l.abandon(cctx, fmt.Errorf("%s: %w", name, err))
	}
	if cfg.Observe != nil {
		l.unobserve = cfg.Observe(name, l.backend, l.drv)
	}
	return l, nil
}

// abandon closes what a lender that never served holds, if the hold was
// released (nothing can be registered): the driver is drained (it never
// ran an operation, so this is at once) and closed, then the memory
// goes back. Otherwise it keeps the memory.
func (l *lender) abandon(ctx context.Context, err error) error {
	if !l.hold.released.Load() {
		return fmt.Errorf("%w (hold kept: memory not freed)", err)
	}
	if !l.drv.Drain(ctx) {
		return fmt.Errorf("%w (the driver did not drain: memory kept)", err)
	}
	if cerr := l.drv.Close(); cerr != nil {
		return errors.Join(err, fmt.Errorf("%s: close driver: %w (memory kept)", l.name, cerr))
	}
	return errors.Join(err, l.mem.Free())
}

// close ends the lender's observation, then follows the owner's cleanup
// order: Shutdown answers no labels, the binding releases the hold, the
// driver is closed last, then the memory goes back. Anything still held
// is reported and kept.
func (l *lender) close(ctx context.Context) error {
	if l.unobserve != nil {
		l.unobserve()
	}
	if labels := l.backend.Shutdown(ctx); len(labels) > 0 {
		return fmt.Errorf("%s: still held after shutdown, memory kept: %s", l.name, strings.Join(labels, ", "))
	}
	select {
	case <-l.backend.Closed():
	case <-ctx.Done():
		return fmt.Errorf("%s: hold not released: %w (memory kept)", l.name, ctx.Err())
	}
	if !l.hold.released.Load() {
		return fmt.Errorf("%s: backend closed without releasing the hold (memory kept)", l.name)
	}
	if err := l.drv.Close(); err != nil {
		return fmt.Errorf("%s: close driver: %w (memory kept)", l.name, err)
	}
	return l.mem.Free()
}
