package node

import (
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodewire"
)

// The gate a reclaim closes: while the shared store client recycles, and
// until every affected lend's reclaim has read its calls again, the node
// refuses new work (code Busy) rather than hand the store what it would
// refuse, or admit an operation after the recycle that a lend's reclaim
// would then have to recycle again for.
//
// Ordering, so that no attempt the recycle could disturb goes uncounted:
// a submission reads recycles before it reads the gate (both under its
// engine's lock); a reclaim closes the gate before it counts the
// recycle, then marks, under each engine's lock, the attempts in flight
// whose outcome is not known. A submission that passed the gate either
// was in its engine's map by then (marked there) or reads recycles again
// as it enters the map, and sees it moved.

// reclaimRefusal is the refusal of new work while a reclaim runs; nil
// when none runs.
func (n *Node) reclaimRefusal(field string) *refusal {
	if !n.reclaimGate.Load() {
		return nil
	}
	r := refuse(nodewire.CodeBusy, field, "the node is reclaiming memory held by unprovable calls (its store client recycles); try again")
	r.reclaiming = true
	return r
}

// beginReclaim closes the gate, counts the recycle about to start, and
// marks every attempt in flight whose outcome is not known as disturbed.
func (n *Node) beginReclaim() {
	n.reclaimGate.Store(true)
	n.recycles.Add(1)
	n.mu.Lock()
	engines := make([]*engine, 0, len(n.engines))
	for e := range n.engines {
		engines = append(engines, e)
	}
	n.mu.Unlock()
	for _, e := range engines {
		e.mu.Lock()
		for _, t := range e.transfers {
			if t == nil { // reserved, not yet submitted: marked as it enters
				continue
			}
			if _, known := t.att.Outcome(); !known {
				t.disturbed.Store(true)
			}
		}
		e.mu.Unlock()
	}
	if n.gateClosed != nil {
		n.gateClosed()
	}
}

// endReclaim opens the gate.
func (n *Node) endReclaim() { n.reclaimGate.Store(false) }

// disturbedCounts counts an attempt a reclaim disturbed, and its rows
// that ended Cancelled.
func disturbedCounts(rows []contract.RowStatus) func(*Counts) {
	return func(c *Counts) {
		c.ReclaimDisturbed++
		for _, s := range rows {
			if s == contract.Cancelled {
				c.ReclaimCancelledRows++
			}
		}
	}
}
