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
// hold (docs/design/node.md, "One store client, a view per lend").
//
// It coalesces with the recycles of the view's [Shared]: when every
// operation the view admitted was admitted before a recycle that started
// after it and ended every access, that recycle ended them all (an
// Unprovable one included), and the view answers as it did (nil, or its error wrapping
// [contract.ErrRecycledClosed]) without recycling again: the node runs
// one recycle for all its engines, then each lend's Reclaim
// (docs/design/node.md, "Reclaim across engines").
func (v *View) recycle(ctx context.Context) error {
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return fmt.Errorf("%w: driverview: recycle: the view is closed", contract.ErrDriverRejected)
	}
	if done, err := v.recycledLocked(); done {
		v.mu.Unlock()
		return err
	}
	v.recycling++
	v.mu.Unlock()
	defer func() {
		v.mu.Lock()
		v.recycling--
		v.broadcastLocked()
		v.mu.Unlock()
	}()
	return v.ledger.Recycle(ctx)
}

// recycledLocked reports whether a recycle of the ledger that started
// after the view's latest admission ended every access (so every
// operation the view ever admitted has ended), and that recycle's
// answer. A view that admitted nothing yet, or with a call inside the
// shared driver (an operation it does not know yet), recycles.
func (v *View) recycledLocked() (bool, error) {
	if v.admitting > 0 || !v.admittedAny {
		return false, nil
	}
	return v.ledger.coveredBy(v.lastAt)
}
