package mooncakesdk

import "sync"

// HandleGuard keeps calls on a store handle and the handle's destruction
// apart, as the library requires: every call enters the guard shared,
// [HandleGuard.Close] takes it exclusively, so destroy never overlaps a
// call, and once it ran no call reaches the handle again. The real
// client and package fakesdk's both use it. The zero HandleGuard is open.
//
// A call is written:
//
//	if err := g.Enter(); err != nil {
//		return err // ErrClosed
//	}
//	defer g.Leave()
type HandleGuard struct {
	mu     sync.RWMutex
	closed bool
}

// Enter admits one call: nil, and the caller calls [HandleGuard.Leave]
// when the call returns; or [ErrClosed] once the guard was closed, and
// the caller reaches nothing (and does not call Leave). Calls may enter
// concurrently; Enter waits while Close is running.
func (g *HandleGuard) Enter() error {
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		return ErrClosed
	}
	return nil
}

// Leave ends a call that Enter admitted.
func (g *HandleGuard) Leave() { g.mu.RUnlock() }

// Close waits until no call is inside the guard, shuts it, and runs
// destroy (if not nil) before any call can enter, which none ever will
// again. The first Close returns nil; later ones return [ErrClosed]
// without running their destroy.
func (g *HandleGuard) Close(destroy func()) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return ErrClosed
	}
	g.closed = true
	if destroy != nil {
		destroy()
	}
	return nil
}
