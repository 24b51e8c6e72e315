package mooncakedrv

import (
	"context"
)

// Drain stops taking work (every later Put, Get and Register is
// refused), ends Cancelled the rows of every part no worker took (and of
// every part a call still admitting builds from now on), stops the
// worker pool and waits within ctx for those calls, the parts inside the
// SDK and the callbacks under way. It makes no SDK call. It returns true only if
// then every operation's access ended and none is Unprovable; false when
// ctx ends first (at once for a context already ended), or when an
// operation's access is Unprovable (that never changes). No callback
// follows a Drain that returned true. Calling it again answers anew.
func (d *Driver) Drain(ctx context.Context) bool {
	d.mu.Lock()
	d.draining = true
	d.mu.Unlock()

	d.cancelQueued() // Drain's caller holds no lock the callbacks could need

	// A call still building its later parts ends them Cancelled now
	// that the driver drains; its parts queued before are in the pool.
	admitted := d.awaitIdle(ctx, func() (int, chan struct{}) { return d.admitting, d.admitIdle })
	stopped := admitted && d.pool.Stop(ctx)
	idle := stopped && d.callbacks.Wait(ctx) &&
		d.awaitIdle(ctx, func() (int, chan struct{}) { return d.lookupsInStore, d.lookupsIdle })
	d.mu.Lock()
	defer d.mu.Unlock()
	d.drained = stopped && idle && len(d.open) == 0 && len(d.unprovable) == 0 && d.lookupsInStore == 0
	return d.drained
}

// awaitIdle waits within ctx until count, read under the driver's lock,
// is 0: count returns a number of calls under way (lookups inside the
// store, calls still queueing parts) and the channel closed when it next
// drops to 0.
func (d *Driver) awaitIdle(ctx context.Context, count func() (int, chan struct{})) bool {
	for {
		d.mu.Lock()
		n, idle := count()
		d.mu.Unlock()
		if n == 0 {
			return true
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return false
		}
	}
}
