package node

import (
	"context"
	"errors"
	"fmt"
)

// Reclaim wins back the memory of lends held by calls whose access can
// never be proven ended (a transfer the store gave up on): through each
// such lend's view it has the shared driver tear down and renew its
// store client (binding's Backend.Reclaim; the driver must be a
// contract.Recycler), which ends those calls' access. Their attempts
// then quiesce, and a lend kept after its engine returned or left it is
// unmapped as its hold is released.
//
// Recycling the shared client refuses every engine's work while it runs
// and ends the rows it had not started Cancelled, so the node never
// reclaims on its own: call it when the held memory is worth that (an
// engine died holding unprovable calls, say). It returns the bytes of
// the calls given back, and the lends' errors joined (each names its
// lend); a lend whose reclaim gave up within ctx stays held, for a
// later try.
func (n *Node) Reclaim(ctx context.Context) (int64, error) {
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
	var bytes int64
	var errs []error
	seen := map[*lend]bool{}
	for _, l := range lends {
		be := l.backend()
		if seen[l] || be == nil || be.Stats().CallsUnprovable == 0 {
			continue
		}
		seen[l] = true
		got, err := be.Reclaim(ctx)
		if got.Calls > 0 {
			bytes += got.Bytes
			n.mu.Lock()
			n.reclaims++
			n.reclaimed += got.Bytes
			n.mu.Unlock()
			n.log.Info("kvshare/node: reclaimed", "lend", l.String(), "calls", got.Calls, "bytes", got.Bytes, "took", got.Took)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%v: %w", l, err))
		}
	}
	return bytes, errors.Join(errs...)
}
