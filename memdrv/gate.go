package memdrv

import (
	"context"
	"fmt"
	"sync"
)

// Gate holds the rows of one direction at the store call (see
// [Driver.Hold]). Its methods are safe for concurrent use.
type Gate struct {
	d   *Driver
	dir Direction

	arriveOnce  sync.Once
	arrived     chan struct{} // closed when the first row blocks
	releaseOnce sync.Once
	released    chan struct{} // closed by Release
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
	if g.d.scene.gates[g.dir] == g {
		g.d.scene.gates[g.dir] = nil
	}
	g.d.mu.Unlock()
	g.releaseOnce.Do(func() { close(g.released) })
}

// pass blocks a row of op at the gate until Release. It reports false
// when the row must end Cancelled instead: op was cancelled while the
// row waited and the driver does not complete rows after a cancel.
func (g *Gate) pass(op *operation) bool {
	g.arriveOnce.Do(func() { close(g.arrived) })
	select {
	case <-g.released:
		return true
	case <-op.cancelled:
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
