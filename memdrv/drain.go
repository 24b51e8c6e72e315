package memdrv

import (
	"context"
)

// Drain stops taking work (every later Put, Get and registration is
// refused), ends Cancelled every row no worker took (whatever
// Capabilities.Cancel says), and waits within ctx until no worker runs a
// row or delivers a callback, and no lookup is inside the store. It returns true only if then every
// operation's access ended and none is Unprovable; false when ctx ends
// first, or at once when all that is left is Unprovable (that can never
// change). No callback follows a Drain that returned true. Calling it
// again answers anew.
func (d *Driver) Drain(ctx context.Context) bool {
	d.mu.Lock()
	d.draining = true
	for _, op := range d.cancelQueuedLocked() {
		d.notifyLocked(op)
	}
	for {
		if d.busy == 0 && len(d.open) == 0 && d.probes.inside == 0 {
			d.drained = len(d.unprovable) == 0
			ok := d.drained
			d.mu.Unlock()
			return ok
		}
		wake := d.wake
		d.mu.Unlock()
		select {
		case <-wake:
			d.mu.Lock()
		case <-ctx.Done():
			d.mu.Lock()
			d.drained = false
			d.mu.Unlock()
			return false
		}
	}
}
