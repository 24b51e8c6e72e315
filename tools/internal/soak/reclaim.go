package soak

import (
	"bytes"
	"context"
	"fmt"
	"time"
)

// reclaim wins back the memory of a round's unprovable attempts: the
// backend reclaims, every one of them must then quiesce, and their
// slots get a fence that the lender's next round checks first.
func (s *soak) reclaim(ctx context.Context, l *lender, held []*attempt, rep *Report) error {
	rctx, cancel := context.WithTimeout(ctx, reclaimWait)
	defer cancel()
	got, err := l.backend.Reclaim(rctx)
	if err != nil {
		return fmt.Errorf("%s: reclaim: %w", l.name, err)
	}
	if got.Calls == 0 {
		return fmt.Errorf("%s: %d attempts unprovable, yet the reclaim gave no call back", l.name, len(held))
	}
	for _, at := range held {
		select {
		case <-at.a.Done():
		case <-time.After(s.cfg.Wait):
			return fmt.Errorf("%s: an attempt did not quiesce within %v of a reclaim that gave %d calls back", l.name, s.cfg.Wait, got.Calls)
		}
	}
	if st := l.backend.Stats(); st.CallsUnprovable != 0 {
		return fmt.Errorf("%s: after a reclaim, %d calls still unprovable", l.name, st.CallsUnprovable)
	}
	if l.fences == nil {
		l.fences = map[int32][]byte{}
	}
	for _, at := range held {
		for _, slot := range at.slots {
			b := l.mem.Slot(int(slot))
			fill(b, fmt.Appendf(nil, "fence %s/%d", l.name, slot))
			l.fences[slot] = bytes.Clone(b)
		}
	}
	rep.Reclaims++
	rep.BytesReclaimed += got.Bytes
	return nil
}

// checkFences checks that no slot a reclaim gave back changed since,
// and forgets the fences: the round may reuse the slots.
func (s *soak) checkFences(l *lender, rep *Report) error {
	for slot, want := range l.fences {
		if !bytes.Equal(l.mem.Slot(int(slot)), want) {
			return fmt.Errorf("%s: slot %d changed after a reclaim gave it back", l.name, slot)
		}
		rep.FencesChecked++
	}
	clear(l.fences)
	return nil
}
