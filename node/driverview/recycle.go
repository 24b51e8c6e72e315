package driverview

import (
	"context"
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// recycle is Recycler's Recycle through the view: it recycles the shared
// driver's store client, which every view shares. While it runs the view
// refuses its own Put, Get, Lookup and registrations (the shared driver
// refuses every view's); the shared driver ends Cancelled the rows no
// worker took, of every view, waits for the rows inside the store, tears
// its client down and ends every Unprovable operation, of every view.
// Its answer passes through. After Close it is refused with an error
// wrapping [contract.ErrDriverRejected].
//
// Nothing less would keep memory safe: the transfers that might still
// touch one view's memory run on the client every view shares, so ending
// them ends everyone's. Why the view offers it all the same: it is the
// only way the node wins back memory a dead engine's unprovable calls
// hold (docs/design.md, "One store client, a view per lend").
func (v *View) recycle(ctx context.Context) error {
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return fmt.Errorf("%w: driverview: recycle: the view is closed", contract.ErrDriverRejected)
	}
	v.recycling++
	v.mu.Unlock()
	defer func() {
		v.mu.Lock()
		v.recycling--
		v.broadcastLocked()
		v.mu.Unlock()
	}()
	return v.recycler.Recycle(ctx)
}
