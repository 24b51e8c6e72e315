package memdrv

import (
	"context"
	"fmt"
	"sync"
)

// Gate holds rows at the store call: every row of one direction (see
// [Driver.Hold]) or the rows of some keys (see [Driver.HoldKeys]). Its
// methods are safe for concurrent use.
type Gate struct {
	d    *Driver
	dir  Direction
	keys map[string]struct{} // the keys it holds; nil for a gate of the whole direction

	arriveOnce  sync.Once
	arrived     chan struct{} // closed when the first row blocks
	releaseOnce sync.Once
	released    chan struct{} // closed by Release

	// Guarded by the driver's lock.
	blocked map[string]int // the keys of the rows blocked at the gate now
	open    bool           // Release was called
}

func newGate(d *Driver, dir Direction, keys []string) *Gate {
	g := &Gate{d: d, dir: dir, arrived: make(chan struct{}), released: make(chan struct{}), blocked: map[string]int{}}
	if keys != nil {
		g.keys = addKeys(nil, keys)
	}
	return g
}

// Held waits until at least one row has blocked on the gate, or ctx
// ends; then it returns an error wrapping ctx's.
func (g *Gate) Held(ctx context.Context) error {
	select {
	case <-g.arrived:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("memdrv: no %s row reached the gate: %w", g.dir, ctx.Err())
	}
}

// Release lets every blocked row go on to the store and stops holding
// (rows taken later pass, unless a later Hold set a new gate). It is
// idempotent.
func (g *Gate) Release() {
	g.d.mu.Lock()
	g.d.scene.dropGateLocked(g)
	g.open = true
	g.d.mu.Unlock()
	g.releaseOnce.Do(func() { close(g.released) })
}

// Holding reports whether the gate keeps a row of key from ending now:
// the row is blocked at it, or it waits for a worker and every worker
// the driver may run is blocked at a gate, so none can take it until a
// gate is released. After Release it is false.
func (g *Gate) Holding(key string) bool {
	d := g.d
	d.mu.Lock()
	open, blocked, atGates := g.open, g.blocked[key] > 0, d.scene.atGates
	d.mu.Unlock()
	switch {
	case open:
		return false
	case blocked:
		return true
	}
	running, limit, waiting := d.Workers(key)
	return running >= limit && atGates >= running && waiting
}

// pass blocks a row, under key, at the gate until Release. It reports
// false when the row must end Cancelled instead: its operation was
// cancelled (cancelled closed) while the row waited and the driver does
// not complete rows after a cancel.
func (g *Gate) pass(cancelled <-chan struct{}, key string) bool {
	g.arrive(key)
	defer g.leave(key)
	g.arriveOnce.Do(func() { close(g.arrived) })
	select {
	case <-g.released:
		return true
	case <-cancelled:
	}
	g.d.mu.Lock()
	stop := g.d.scene.cancelHeld
	g.d.mu.Unlock()
	if stop {
		return false
	}
	<-g.released
	return true
}

// arrive counts a row of key blocked at the gate.
func (g *Gate) arrive(key string) {
	g.d.mu.Lock()
	defer g.d.mu.Unlock()
	g.blocked[key]++
	g.d.scene.atGates++
}

// leave counts the row of key off the gate.
func (g *Gate) leave(key string) {
	g.d.mu.Lock()
	defer g.d.mu.Unlock()
	if g.blocked[key]--; g.blocked[key] == 0 {
		delete(g.blocked, key)
	}
	g.d.scene.atGates--
}
