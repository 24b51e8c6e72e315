package soak

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

// lender is one backend of the soak: a region of staging slots (memory
// outside the Go heap) lent to a backend over a driver of its own. The
// memory stays for the whole run; backends and drivers come and go.
type lender struct {
	name    string
	mem     *memdrv.Memory
	drv     contract.Driver
	backend *binding.Backend
	hold    *hold
	// fences are the slots a reclaim gave back, each with the pattern
	// written into it then; the next round checks them first.
	fences map[int32][]byte
}

// hold is the lender's hold on its region for one binding.
type hold struct{ released atomic.Bool }

func (h *hold) Release() { h.released.Store(true) }

// bind opens a driver from the store and binds the region to a new
// backend.
func (l *lender) bind(ctx context.Context, cfg Config, prefix string) error {
	drv, err := cfg.Store.OpenDriver(ctx, l.name)
	if err != nil {
		return fmt.Errorf("%s: open driver: %w", l.name, err)
	}
	l.drv, l.hold = drv, &hold{}
	regions, err := binding.Bind(drv, []contract.SlotRegion{l.mem.Region}, l.hold)
	if err != nil {
		return fmt.Errorf("%s: bind: %w", l.name, err)
	}
	l.backend, err = binding.New(regions, binding.Config{KeyPrefix: prefix})
	if err != nil {
		return fmt.Errorf("%s: backend: %w", l.name, err)
	}
	return nil
}

// unbind follows the owner's cleanup order and checks each promise on
// the way: nothing lent once every attempt quiesced, Shutdown answers no
// label, the hold was released and every region unregistered, then the
// driver closes. Anything kept is an error (and the memory stays).
func (l *lender) unbind(ctx context.Context) error {
	if s := l.backend.Stats(); s.AttemptsOpen == 0 && (s.RowsLent != 0 || s.BytesLent != 0) {
		return fmt.Errorf("%s: no attempt open, yet %d rows and %d bytes lent", l.name, s.RowsLent, s.BytesLent)
	}
	if labels := l.backend.Shutdown(ctx); len(labels) > 0 {
		return fmt.Errorf("%s: still held after Shutdown: %s", l.name, strings.Join(labels, ", "))
	}
	switch {
	case !l.hold.released.Load():
		return fmt.Errorf("%s: Shutdown answered empty, yet the hold was not released", l.name)
	case len(l.backend.Regions().Held()) > 0:
		return fmt.Errorf("%s: Shutdown answered empty, yet %s still registered", l.name, strings.Join(l.backend.Regions().Held(), ", "))
	}
	s := l.backend.Stats()
	if s.RowsLent != 0 || s.BytesLent != 0 || s.AttemptsOpen != 0 {
		return fmt.Errorf("%s: after Shutdown %d attempts open, %d rows and %d bytes lent", l.name, s.AttemptsOpen, s.RowsLent, s.BytesLent)
	}
	if err := l.drv.Close(); err != nil {
		return fmt.Errorf("%s: close driver: %w", l.name, err)
	}
	return nil
}

// free gives the memory back; memdrv refuses while any registration of
// its drivers covers it.
func (l *lender) free() error {
	if err := l.mem.Free(); err != nil {
		return errors.Join(fmt.Errorf("%s: free", l.name), err)
	}
	return nil
}
