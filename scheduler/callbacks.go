package scheduler

import (
	"context"
	"sync"
)

// Callbacks runs a driver's callbacks that must not run on the caller's
// goroutine (the rows a Cancel ends are reported off Cancel's caller),
// each on a goroutine of its own, and lets Drain wait for those under
// way. The zero value is ready; it is safe for concurrent use.
type Callbacks struct {
	mu   sync.Mutex
	busy int
	idle chan struct{} // closed and replaced when busy drops to 0
}

// Go runs f on a goroutine of its own, counted until f returns (a panic
// in f is recovered and dropped: see [Call] to learn of it).
func (c *Callbacks) Go(f func()) {
	c.mu.Lock()
	c.busy++
	c.mu.Unlock()
	go func() {
		defer c.done()
		Call(f)
	}()
}

func (c *Callbacks) done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.busy--
	if c.busy == 0 && c.idle != nil {
		close(c.idle)
		c.idle = nil
	}
}

// Wait waits within ctx until no callback started by Go is under way,
// and reports whether none is.
func (c *Callbacks) Wait(ctx context.Context) bool {
	c.mu.Lock()
	if c.busy == 0 {
		c.mu.Unlock()
		return true
	}
	if c.idle == nil {
		c.idle = make(chan struct{})
	}
	idle := c.idle
	c.mu.Unlock()
	select {
	case <-idle:
		return true
	case <-ctx.Done():
		return false
	}
}

// Call calls f and returns what it panicked with, nil when it returned:
// a driver's callback that panics must not take the worker, and with it
// the pool's promises, down.
func Call(f func()) (panicked any) {
	defer func() { panicked = recover() }()
	f()
	return nil
}
