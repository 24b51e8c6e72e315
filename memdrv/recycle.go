package memdrv

import (
	"context"
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

var _ contract.Recycler = (*Driver)(nil)

// stray is a get's transfer the store gave up on (UnprovableGets) that
// still runs: it writes data into spans when FinishStrays says, unless a
// Recycle tore it down first.
type stray struct {
	spans []contract.Span
	data  []byte
}

// Recycle is [contract.Recycler]'s: it refuses every call while it runs,
// ends Cancelled every row no worker took, and waits within ctx until no
// worker runs a row or delivers a callback and no lookup is inside the
// store. It then tears down the transfers the store gave up on (the
// strays of UnprovableGets, which will never write), ends the access of
// every Unprovable operation, calls their callbacks, and takes work
// again unless a Drain stopped it. Registrations stay as they are: the
// store is in process, so there is nothing to register again. If ctx
// ends first it changes no access and returns an error wrapping
// [contract.ErrDriverRejected]; after Close it is refused the same way.
// memdrv always has fresh resources, so it never answers
// [contract.ErrRecycledClosed].
func (d *Driver) Recycle(ctx context.Context) error {
	d.mu.Lock()
	switch {
	case d.closed:
		d.mu.Unlock()
		return fmt.Errorf("%w: memdrv: recycle: driver closed", contract.ErrDriverRejected)
	case d.recycling:
		d.mu.Unlock()
		return fmt.Errorf("%w: memdrv: recycle: another Recycle runs", contract.ErrDriverRejected)
	}
	d.recycling = true
	for _, op := range d.cancelQueuedLocked() {
		d.notifyLocked(op)
	}
	for d.busy > 0 || d.probes.inside > 0 {
		wake := d.wake
		d.mu.Unlock()
		select {
		case <-wake:
			d.mu.Lock()
		case <-ctx.Done():
			d.mu.Lock()
			d.recycling = false
			d.spawnLocked()
			d.mu.Unlock()
			return fmt.Errorf("%w: memdrv: recycle: rows still inside the store when the context ended (%v): nothing torn down", contract.ErrDriverRejected, ctx.Err())
		}
	}
	bent := d.scene.recycle
	d.scene.recycle = recycleBend{}
	d.mu.Unlock()
	if !bent.keepStrays {
		d.landing.Lock() // waits for strays writing now
		d.mu.Lock()
		if bent.stopOneStray {
			d.strays = d.strays[min(1, len(d.strays)):]
		} else {
			d.strays = nil
		}
		d.mu.Unlock()
		d.landing.Unlock()
	}
	d.mu.Lock()
	ended := d.unprovable
	if bent.callBackFirst {
		d.mu.Unlock()
		for _, op := range ended {
			d.callOnChange(op)
		}
		d.mu.Lock()
	}
	d.unprovable = nil
	for _, op := range ended {
		op.access = contract.Ended
	}
	d.recycles++
	d.recycling = false
	d.wakeLocked()
	d.spawnLocked()
	d.mu.Unlock()
	if !bent.callBackFirst {
		for _, op := range ended {
			d.callOnChange(op)
		}
	}
	return nil
}

// cancelQueuedLocked ends Cancelled every row no worker took and empties
// the queue; it returns the operations it changed.
func (d *Driver) cancelQueuedLocked() []*operation {
	var hit []*operation
	for _, t := range d.queue[d.head:] {
		if t.op.rows[t.row] == contract.Pending && t.op.cancelUntakenLocked(contract.Cancelled) {
			hit = append(hit, t.op)
		}
	}
	d.queue, d.head = nil, 0
	return hit
}

// FinishStrays lets every transfer the store gave up on run to its end:
// each one no Recycle tore down writes its object into its row's spans
// now, as a network that was only slow would. It returns how many wrote.
func (d *Driver) FinishStrays() int {
	d.landing.Lock()
	defer d.landing.Unlock()
	d.mu.Lock()
	strays := d.strays
	d.strays = nil
	d.mu.Unlock()
	for _, s := range strays {
		scatter(s.spans, s.data)
	}
	return len(strays)
}

// recycleBend is how the next Recycle that ends every access breaks
// its rules, as the deviation hooks below stage it; the zero value keeps
// them.
type recycleBend struct {
	keepStrays    bool // KeepStraysOnRecycle
	stopOneStray  bool // StopOneStrayOnRecycle
	callBackFirst bool // CallBackBeforeEndOnRecycle
}

// KeepStraysOnRecycle makes the next Recycle tear nothing down while it
// still reports every access Ended: a later FinishStrays then writes
// memory whose access ended. It is the deviation a conformance suite
// must catch.
func (d *Driver) KeepStraysOnRecycle() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.scene.recycle.keepStrays = true
}

// StopOneStrayOnRecycle makes the next Recycle tear down only the oldest
// transfer the store gave up on, leaving the others running, while it
// still reports every access Ended: a later FinishStrays then writes,
// through every transfer but that one, memory whose access ended. It is
// a deviation a conformance suite must catch (an operation of several
// rows leaves several transfers).
func (d *Driver) StopOneStrayOnRecycle() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.scene.recycle.stopOneStray = true
}

// CallBackBeforeEndOnRecycle makes the next Recycle call the onChange of
// every Unprovable operation before their access reads Ended, and not
// again after: a Poll from inside the callback still reads Unprovable.
// It is a deviation a conformance suite must catch (a callback follows
// the change it reports).
func (d *Driver) CallBackBeforeEndOnRecycle() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.scene.recycle.callBackFirst = true
}

// Recycles returns how many Recycles ended every access.
func (d *Driver) Recycles() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.recycles
}
