package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// closeTimeout bounds a lender's cleanup.
const closeTimeout = 30 * time.Second

// lender is an engine's staging memory as the benchmark lends it: one
// host region of slots outside the Go heap, lent under a hold to a
// backend over a driver the lender owns.
type lender struct {
	mems    []*memdrv.Memory // region i of the binding is mems[i]
	drv     contract.Driver
	backend *binding.Backend
	hold    *hold
	// unobserve ends what an observer started (nil: nothing).
	unobserve func()
}

// hold is the lender's hold: the memory is freed only once the binding
// released it.
type hold struct{ released atomic.Bool }

func (h *hold) Release() { h.released.Store(true) }

// newLender maps slots×rowBytes bytes, touches every page (an engine's
// staging memory is long-lived: no first-touch faults in a measurement),
// binds the region to drv and builds a backend with cfg (a quiet logger
// when cfg has none). On error whatever was built is given back, the
// driver included.
func newLender(drv contract.Driver, rowBytes int64, slots int, cfg binding.Config, obs observation) (*lender, error) {
	mem, err := memdrv.Alloc(rowBytes, slots, contract.Host)
	if err != nil {
		return nil, errors.Join(err, closeIdle(drv))
	}
	fill(mem.Bytes, 0x5a)
	l, err := lendMemory(drv, cfg, obs, mem)
	if err != nil && !errors.Is(err, errMemoryKept) {
		err = errors.Join(err, mem.Free())
	}
	return l, err
}

// errMemoryKept is wrapped by errors after which the memory must stay
// mapped (the hold was kept).
var errMemoryKept = errors.New("hold kept: memory not freed")

// lendMemory lends memory the caller mapped (and frees) to a backend
// over drv, one region per mapping: newLender without the mapping. On
// error the driver is closed unless the hold was kept (the error then
// wraps errMemoryKept).
func lendMemory(drv contract.Driver, cfg binding.Config, obs observation, mems ...*memdrv.Memory) (*lender, error) {
	l := &lender{mems: mems, drv: drv, hold: &hold{}}
	regions := make([]contract.SlotRegion, len(mems))
	for i, m := range mems {
		regions[i] = m.Region
	}
	bound, err := binding.Bind(drv, regions, l.hold)
	if err != nil {
		if l.hold.released.Load() {
			return nil, errors.Join(fmt.Errorf("bench: bind: %w", err), closeIdle(drv))
		}
		return nil, fmt.Errorf("bench: bind: %w (%w)", err, errMemoryKept)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	l.backend, err = binding.New(bound, cfg)
	if err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		if uerr := bound.Unbind(ctx); uerr != nil {
			return nil, fmt.Errorf("bench: %w (and unbind: %v; %w)", err, uerr, errMemoryKept)
		}
		return nil, errors.Join(fmt.Errorf("bench: %w", err), closeIdle(drv))
	}
	if obs.observe != nil {
		l.unobserve = obs.observe(obs.lender, l.backend, drv)
	}
	return l, nil
}

// observation is the observer a lender is told to (nil: none), and the
// name it goes by.
type observation struct {
	observe observer
	lender  string
}

// observed names the lenders of measurement m to o's observer.
func observed(o Options, m Measurement) observation {
	return observation{observe: o.Observe, lender: m.String()}
}

// closeIdle drains and closes a driver that never ran an operation.
func closeIdle(drv contract.Driver) error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if !drv.Drain(ctx) {
		return errors.New("bench: the driver did not drain")
	}
	return drv.Close()
}

// close is release, then the memory goes back.
func (l *lender) close() error {
	if err := l.release(); err != nil {
		return err
	}
	var errs []error
	for _, m := range l.mems {
		errs = append(errs, m.Free())
	}
	return errors.Join(errs...)
}

// release ends the lender's observation, then follows the owner's
// cleanup order: Shutdown answers no labels, the hold is released, the
// driver is closed last; the memory stays the caller's. Anything still
// held is named (and the memory must be kept).
func (l *lender) release() error {
	if l.unobserve != nil {
		l.unobserve()
		l.unobserve = nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if labels := l.backend.Shutdown(ctx); len(labels) > 0 {
		return fmt.Errorf("bench: still held after shutdown, memory kept: %s", strings.Join(labels, ", "))
	}
	select {
	case <-l.backend.Closed():
	case <-ctx.Done():
		return fmt.Errorf("bench: hold not released: %w (memory kept)", ctx.Err())
	}
	if err := l.drv.Close(); err != nil {
		return fmt.Errorf("bench: close driver: %w (memory kept)", err)
	}
	return nil
}

// fill writes b with a pattern (touching every page).
func fill(b []byte, seed byte) {
	if len(b) == 0 {
		return
	}
	b[0] = seed
	for n := 1; n < len(b); n *= 2 {
		copy(b[n:], b[:n])
	}
}
