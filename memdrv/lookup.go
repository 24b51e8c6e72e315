package memdrv

import (
	"context"
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// Look answers for the kit's Lookup from the in-memory store, exact: a
// complete object is Present, a key being written by another writer
// InFlight, any other Absent (the kit answers InFlight for this driver's
// own puts). Its scenario hooks: [Driver.HoldLookups] holds lookups
// inside the store until the gate opens (the kit answers Unknown once
// the caller's context ends, and the lookup stays inside the store
// meanwhile), [Driver.FailLookups] makes the store fail to answer for
// some keys (Unknown).
func (c client) Look(_ context.Context, keys [][]byte, dst []contract.Presence) []contract.Presence {
	d := c.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if gate := d.probes.gate; gate != nil {
		d.mu.Unlock()
		gate.arrive()
		<-gate.open
		d.mu.Lock()
	}
	d.store.mu.Lock() // once for the batch (the store never takes a driver's lock)
	defer d.store.mu.Unlock()
	for _, k := range keys {
		if _, failed := d.probes.failing[string(k)]; failed {
			dst = append(dst, contract.Unknown)
			continue
		}
		switch d.store.presenceLocked(k) {
		case contract.Ready:
			dst = append(dst, contract.Present)
		case contract.NotReady:
			dst = append(dst, contract.InFlight)
		default:
			dst = append(dst, contract.Absent)
		}
	}
	return dst
}

// LookBlocks says whether a lookup may block inside the store now: while
// a gate of HoldLookups holds lookups.
func (c client) LookBlocks() bool {
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	return c.d.probes.gate != nil
}

// probeScene is the lookups' scenario state, guarded by the driver's
// lock.
type probeScene struct {
	gate    *LookupGate
	failing map[string]struct{}
}

// LookupGate holds lookups inside the store (see [Driver.HoldLookups]).
type LookupGate struct {
	d       *Driver
	arrived chan struct{} // closed when a lookup first blocks
	open    chan struct{} // closed by Release
}

func (g *LookupGate) arrive() {
	g.d.mu.Lock()
	defer g.d.mu.Unlock()
	select {
	case <-g.arrived:
	default:
		close(g.arrived)
	}
}

// Held waits within ctx until a lookup is held at the gate.
func (g *LookupGate) Held(ctx context.Context) error {
	select {
	case <-g.arrived:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("memdrv: no lookup reached the gate: %w", ctx.Err())
	}
}

// Release lets every held lookup answer and stops holding; idempotent.
func (g *LookupGate) Release() {
	g.d.mu.Lock()
	defer g.d.mu.Unlock()
	if g.d.probes.gate == g {
		g.d.probes.gate = nil
	}
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

// HoldLookups makes every later lookup block inside the store until the
// gate is released: its context's end answers Unknown for its names, and
// it stays inside the store (Drain answers false, Close is refused)
// until Release. An abandoned lookup owns nothing but the kit's copy of
// its keys.
func (d *Driver) HoldLookups() *LookupGate {
	g := &LookupGate{d: d, arrived: make(chan struct{}), open: make(chan struct{})}
	d.mu.Lock()
	d.probes.gate = g
	d.mu.Unlock()
	return g
}

// FailLookups makes the store fail to answer lookups of these keys:
// they read Unknown.
func (d *Driver) FailLookups(keys ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.probes.failing == nil {
		d.probes.failing = map[string]struct{}{}
	}
	for _, k := range keys {
		d.probes.failing[k] = struct{}{}
	}
}
