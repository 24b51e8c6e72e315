package mooncakedrv

import (
	"context"
)

// Drain stops taking work (every later Put, Get and Register is
// refused), ends Cancelled the rows of every part no worker took, stops
// the worker pool and waits within ctx for the parts inside the SDK and
// the callbacks under way. It makes no SDK call. It returns true only if
// then every operation's access ended and none is Unprovable; false when
// ctx ends first (at once for a context already ended), or when an
// operation's access is Unprovable (that never changes). No callback
// follows a Drain that returned true. Calling it again answers anew.
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
	for _, p := range removed {
		d.releasePart(p)
	}
	// Drain's caller holds no lock the callback could need.
	for _, op := range touched {
		d.callOnChange(op)
	}

	stopped := d.pool.Stop(ctx)
	idle := d.callbacks.Wait(ctx) && d.awaitLookups(ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.drained = stopped && idle && len(d.open) == 0 && len(d.unprovable) == 0 && d.lookupsInStore == 0
	return d.drained
}

// awaitLookups waits within ctx until no lookup is inside the store.
func (d *Driver) awaitLookups(ctx context.Context) bool {
	for {
		d.mu.Lock()
		if d.lookupsInStore == 0 {
			d.mu.Unlock()
			return true
		}
		idle := d.lookupsIdle
		d.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return false
		}
	}
}
