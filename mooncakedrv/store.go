package mooncakedrv

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// store is what is Mooncake's under the kit: the client and its SDK
// calls, the verdict table, the ledger of keys left open, and the
// client's teardown. Its lock guards the client (swapped by a
// teardown), the ledger and the counters.
type store struct {
	reopen func(ctx context.Context) (mooncakesdk.Client, error)
	log    *slog.Logger

	mu     sync.Mutex
	client mooncakesdk.Client // nil once a teardown had no fresh one
	ledger ledger
	counts storeCounts
	spare  []*args // store calls' arguments kept for reuse (see keepArgs)
}

// storeCounts are the store's own counters, beside the kit's.
type storeCounts struct {
	calls, callsShared, panics         int64
	partsShared, partsUnprovableShared int64
	rowsDeclinedLeftOpen               int64
}

var (
	_ drivekit.Store      = (*store)(nil)
	_ drivekit.Looker     = (*store)(nil)
	_ drivekit.Registrar  = (*store)(nil)
	_ drivekit.Teardown   = (*store)(nil)
	_ drivekit.Closer     = (*store)(nil)
	_ drivekit.KeyChecker = (*store)(nil)
	_ drivekit.Counting   = (*store)(nil)
)

// current returns the client now.
func (s *store) current() mooncakesdk.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.client
}

// count adds an SDK call to the counters, and a recovered panic.
func (s *store) count(shared bool, panicked any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts.calls++
	if shared {
		s.counts.callsShared++
	}
	if panicked != nil {
		s.counts.panics++
	}
}

// CheckKey refuses a key that cannot cross to C: one holding a NUL byte.
func (s *store) CheckKey(key string) error {
	if strings.IndexByte(key, 0) >= 0 {
		return fmt.Errorf("%w: key %q holds a NUL byte", mooncakesdk.ErrInvalidArgument, key)
	}
	return nil
}

// Keep registers each region with the store's transfer engine (one
// register_buffer call over the whole region). Only host memory goes:
// the kit refuses Device regions first. A store that refuses registers
// nothing; a panic inside the SDK may have left the buffer registered,
// so it is a [*contract.RegistrationError] whose handle must be revoked.
func (s *store) Keep(rs []contract.SlotRegion, _ bool) (any, error) {
	c := s.current()
	for _, r := range rs {
		panicked, err := sdkCall(func() error { return c.RegisterBuffer(r.Base, uint64(r.Len)) })
		switch {
		case panicked != nil:
			return nil, &contract.RegistrationError{Registration: 1, Err: fmt.Errorf("mooncakedrv: register_buffer panicked: %v", panicked)}
		case err != nil:
			return nil, fmt.Errorf("%w: mooncakedrv: register: %w", contract.ErrDriverRejected, err)
		}
	}
	return nil, nil
}

// Revoke withdraws each region's registration (one unregister_buffer
// call). A store that refuses, or an SDK that panics, leaves it
// registered: the caller asks again.
func (s *store) Revoke(rs []contract.SlotRegion, _ any) error {
	c := s.current()
	for _, r := range rs {
		panicked, err := sdkCall(func() error { return c.UnregisterBuffer(r.Base) })
		switch {
		case panicked != nil:
			return fmt.Errorf("unregister_buffer panicked: %v", panicked)
		case err != nil:
			return fmt.Errorf("unregister: %w", err)
		}
	}
	return nil
}

// Teardown destroys the client: mooncake_store_destroy returns only
// once the client's transfer threads were joined and their sockets
// closed, so no transfer it ever started can touch lent memory
// afterwards. A destroy that fails (a panic in the binding) proves
// nothing: the client stays. Then Config.Reopen's fresh client takes
// its place with every region in rs registered again; without Reopen,
// or when that fails, the driver is left without a client
// ([contract.ErrRecycledClosed]).
func (s *store) Teardown(ctx context.Context, rs []contract.SlotRegion) error {
	if panicked, err := sdkCall(s.current().Destroy); panicked != nil || err != nil {
		s.log.Error("mooncakedrv: recycle: destroying the client failed; access stays as it was", "panic", panicked, "err", err)
		return fmt.Errorf("destroying the client failed (panic %v, err %v): nothing proven", panicked, err)
	}
	fresh, err := s.open(ctx, rs)
	s.mu.Lock()
	s.client = fresh
	s.mu.Unlock()
	if err != nil {
		s.log.Warn("mooncakedrv: recycle: the client was destroyed and no fresh one is to be had; the driver is closed", "err", err)
		return fmt.Errorf("%w: mooncakedrv: %w", contract.ErrRecycledClosed, err)
	}
	s.log.Info("mooncakedrv: recycle: client destroyed and opened again")
	return nil
}

// open opens the fresh client and registers every region with it; on
// any failure the fresh client is destroyed again and nil returned.
func (s *store) open(ctx context.Context, rs []contract.SlotRegion) (mooncakesdk.Client, error) {
	if s.reopen == nil {
		return nil, fmt.Errorf("recycle: no Reopen in the driver's Config to open a fresh client")
	}
	c, err := s.reopen(ctx)
	if err != nil {
		return nil, fmt.Errorf("recycle: opening a fresh client: %w", err)
	}
	for _, r := range rs {
		panicked, err := sdkCall(func() error { return c.RegisterBuffer(r.Base, uint64(r.Len)) })
		if panicked != nil || err != nil {
			if _, derr := sdkCall(c.Destroy); derr != nil {
				s.log.Warn("mooncakedrv: recycle: destroying the fresh client", "err", derr)
			}
			return nil, fmt.Errorf("recycle: registering region at %#x (%d bytes) with the fresh client: panic %v, err %v", r.Base, r.Len, panicked, err)
		}
	}
	return c, nil
}

// Close destroys the client, unless a Recycle left none.
func (s *store) Close() error {
	c := s.current()
	if c == nil {
		return nil
	}
	panicked, err := sdkCall(c.Destroy)
	if panicked != nil {
		return fmt.Errorf("destroy panicked: %v", panicked)
	}
	return err
}
