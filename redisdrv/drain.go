package redisdrv

import (
	"context"
)

// Drain stops taking work (every later Put, Get, Register and Lookup is
// refused), ends Cancelled the rows of every part no worker took, stops
// the worker pool and waits within ctx for the round trips under way,
// the callbacks being delivered and the lookups inside the client. It
// sends nothing to the server. It returns true only if then every
// operation's access ended and none is Unprovable; false when ctx ends
// first (at once for a context already ended), or when an operation's
// access is Unprovable (that never changes). No callback follows a
// Drain that returned true. Calling it again answers anew.
func (d *Driver) Drain(ctx context.Context) bool {
	d.mu.Lock()
	d.draining = true
	d.mu.Unlock()

	removed := d.pool.Cancel(func(*part) bool { return true })
	var touched []*operation
	d.mu.Lock()
	for _, p := range removed {
		d.cancelPartLocked(p)
		if len(touched) == 0 || touched[len(touched)-1] != p.op {
			touched = append(touched, p.op)
		}
	}
	d.mu.Unlock()
	for _, op := range touched {
		d.callOnChange(op)
	}

	stopped := d.pool.Stop(ctx)
	idle := d.await(ctx, func() (bool, chan struct{}) { return d.busy == 0, d.idle }) &&
		d.await(ctx, func() (bool, chan struct{}) { return d.lookupsInStore == 0, d.lookupsIdle })
	d.mu.Lock()
	defer d.mu.Unlock()
	d.drained = stopped && idle && len(d.open) == 0 && len(d.unprovable) == 0 && d.lookupsInStore == 0
	return d.drained
}

// await waits within ctx until done, read under the lock, holds; wake
// is the channel closed when it may have changed.
func (d *Driver) await(ctx context.Context, state func() (done bool, wake chan struct{})) bool {
	for {
		d.mu.Lock()
		done, wake := state()
		d.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return false
		}
	}
}
