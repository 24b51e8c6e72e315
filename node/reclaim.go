package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
)

// Reclaim wins back the memory of lends held by calls whose access can
// never be proven ended (a transfer the store gave up on), every
// engine's at once. The store client is one for the whole node, so is
// its recycle: Reclaim has the shared driver recycle once (it must be a
// contract.Recycler), which ends every such call's access, then each
// affected lend's backend reclaim through its view (binding's
// Backend.Reclaim), which finds its calls ended by that recycle,
// recycles nothing again, and gives their slots back. Their attempts
// then quiesce, and a lend kept after its engine returned or left it is
// unmapped as its hold is released.
//
// The recycle disturbs every engine: while Reclaim runs the node
// refuses lends, publishes, fetches and lookups with code Busy, the
// store refuses what was on its way in, and rows no worker had taken
// end Cancelled; Stats counts all three (ReclaimRefused,
// ReclaimDisturbed, ReclaimCancelledRows). So it runs only when asked,
// or when the bytes of the lends the node keeps reach
// Config.ReclaimAbove. When no lend holds an unprovable call it
// recycles nothing and returns 0. One runs at a time: a second waits
// for the first within its own ctx.
//
// It returns the bytes of the calls given back, and the errors joined
// (each lend's names it); a recycle that gave up within ctx gives back
// nothing and changes no access, and the lends stay held, for a later
// try.
func (n *Node) Reclaim(ctx context.Context) (int64, error) {
	select {
	case n.reclaimTurn <- struct{}{}:
	case <-ctx.Done():
		return 0, fmt.Errorf("kvshare/node: reclaim: waiting for the reclaim under way: %w", ctx.Err())
	}
	defer func() { <-n.reclaimTurn }()

	lends := n.unprovableLends()
	if len(lends) == 0 {
		return 0, nil
	}
	if _, ok := n.cfg.Driver.(contract.Recycler); !ok {
		return 0, fmt.Errorf("%w: the node's driver (%T) is no contract.Recycler", binding.ErrNotRecyclable, n.cfg.Driver)
	}

	n.beginReclaim()
	defer n.endReclaim()
	start := time.Now()
	err := n.shared.Recycle(ctx)
	took := time.Since(start)
	if err != nil && !errors.Is(err, contract.ErrRecycledClosed) {
		n.log.Warn("kvshare/node: reclaim: the store client's recycle gave up; nothing given back", "lends", len(lends), "took", took, "err", err)
		return 0, fmt.Errorf("kvshare/node: reclaim: %w", err)
	}
	var bytes, calls int64
	var errs []error
	if err != nil {
		errs = append(errs, fmt.Errorf("kvshare/node: reclaim: %w", err))
	}
	for _, l := range lends {
		got, err := l.be.Reclaim(ctx) // the view finds the recycle done: no second one
		bytes += got.Bytes
		calls += got.Calls
		if got.Calls > 0 {
			n.log.Info("kvshare/node: reclaimed", "lend", l.String(), "calls", got.Calls, "bytes", got.Bytes)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%v: %w", l, err))
		}
	}
	n.mu.Lock()
	n.reclaims++
	n.reclaimed += bytes
	n.broadcastLocked() // a waiter on the counts looks again
	n.mu.Unlock()
	n.log.Info("kvshare/node: reclaim: one recycle of the store client for every engine", "lends", len(lends), "calls", calls, "bytes", bytes, "recycle_took", took)
	return bytes, errors.Join(errs...)
}

// unprovableLends returns the lends, kept or not, whose backend holds a
// call whose access it could not prove ended.
func (n *Node) unprovableLends() []*lend {
	var lends []*lend
	n.mu.Lock()
	for l := range n.kept {
		lends = append(lends, l)
	}
	engines := make([]*engine, 0, len(n.engines))
	for e := range n.engines {
		engines = append(engines, e)
	}
	n.mu.Unlock()
	for _, e := range engines {
		e.mu.Lock()
		for _, l := range e.lends {
			lends = append(lends, l)
		}
		e.mu.Unlock()
	}
	seen := map[*lend]bool{}
	var held []*lend
	for _, l := range lends {
		be := l.backend()
		if seen[l] || be == nil || be.Stats().CallsUnprovable == 0 {
			continue
		}
		seen[l] = true
		held = append(held, l)
	}
	return held
}
