package memdrv

import (
	"context"

	"github.com/kvshare/kvshare/contract"
)

// stray is a get's transfer the store gave up on (UnprovableGets) that
// still runs: it writes data into spans when FinishStrays says, unless a
// Recycle tore it down first.
type stray struct {
	spans []contract.Span
	data  []byte
}

// Teardown is the store client's teardown, which the kit's Recycle
// calls once no row and no lookup is inside the store: it tears down
// the transfers the store gave up on (the strays of UnprovableGets,
// which will never write), waiting for any writing now. Registrations
// stay as they are: the store is in process, so there is nothing to
// register again, and memdrv always has fresh resources (it never
// answers [contract.ErrRecycledClosed]).
func (c client) Teardown(context.Context, []contract.SlotRegion) error {
	d := c.d
	d.mu.Lock()
	bent := d.scene.recycle
	d.scene.recycle = recycleBend{}
	d.mu.Unlock()
	if bent.keepStrays {
		return nil
	}
	d.landing.Lock() // waits for strays writing now
	defer d.landing.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	if bent.stopOneStray {
		d.strays = d.strays[min(1, len(d.strays)):]
	} else {
		d.strays = nil
	}
	return nil
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
// them. (CallBackBeforeEndOnRecycle is the kit's.)
type recycleBend struct {
	keepStrays   bool // KeepStraysOnRecycle
	stopOneStray bool // StopOneStrayOnRecycle
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
