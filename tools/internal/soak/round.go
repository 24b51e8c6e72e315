package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kvshare/kvshare/contract"
)

// attempt is one submission of a round and what the check needs.
type attempt struct {
	fetch bool
	names [][]byte
	slots []int32
	fresh []bool // fetch: the name was never published (must not arrive)
	a     contract.Attempt
}

// round submits one to three attempts on disjoint slots of the lender,
// cancels some, waits for every one to quiesce and checks them.
func (s *soak) round(ctx context.Context, l *lender, rng *rand.Rand, rep *Report) error {
	if err := s.checkFences(l, rep); err != nil {
		return err
	}
	n := 1 + rng.IntN(3)
	perm := rng.Perm(s.cfg.Slots)
	per := len(perm) / n
	attempts := make([]*attempt, 0, n)
	for k := range n {
		rows := 1 + rng.IntN(min(s.cfg.ViewRows, per))
		at := s.plan(rng, perm[k*per:k*per+rows])
		if err := s.submit(l, at, rep); err != nil {
			return err
		}
		attempts = append(attempts, at)
		if rng.IntN(10) == 0 {
			at.a.Cancel()
			rep.Cancels++
		}
	}
	wait := time.NewTimer(s.cfg.Wait)
	defer wait.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var unprovable []*attempt
	for _, at := range attempts {
		held, err := s.await(ctx, l, at, wait.C, tick.C)
		if err != nil {
			return err
		}
		if held {
			// The store left its access unprovable: it never quiesces.
			// Its outcome is final; check that.
			unprovable = append(unprovable, at)
			rep.AttemptsUnprovable++
			if err := s.checkOutcome(l, at, rep); err != nil {
				return err
			}
			continue
		}
		if err := s.check(l, at, rep); err != nil {
			return err
		}
	}
	switch {
	case len(unprovable) == 0:
		return nil
	case s.cfg.Reclaim:
		return s.reclaim(ctx, l, unprovable, rep)
	}
	return s.retire(ctx, l, rep)
}

// await waits for at to quiesce, within the round's wait; with faults
// on it reports held instead once at is final but held for good.
func (s *soak) await(ctx context.Context, l *lender, at *attempt, wait, tick <-chan time.Time) (held bool, err error) {
	for {
		select {
		case <-at.a.Done():
			return false, nil
		case <-tick:
			if s.cfg.Faults != nil && s.heldForGood(l, at) {
				return true, nil
			}
		case <-wait:
			return false, fmt.Errorf("%s: an attempt did not quiesce within %v: %v", l.name, s.cfg.Wait, l.backend.Stats())
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// heldForGood reports whether at has its outcome and its backend counts
// a call unprovable: what a fault may leave, and the only reason an
// attempt may stay unquiesced.
func (s *soak) heldForGood(l *lender, at *attempt) bool {
	_, ok := at.a.Outcome()
	return ok && !at.a.Quiesced() && l.backend.Stats().CallsUnprovable > 0
}

// plan picks an attempt's direction and names for the given slots.
func (s *soak) plan(rng *rand.Rand, slots []int) *attempt {
	at := &attempt{fetch: rng.IntN(2) == 0}
	seen := make(map[int]bool, len(slots))
	for _, slot := range slots {
		i := rng.IntN(s.cfg.Names)
		for seen[i] { // one name once per view keeps the check simple
			i = (i + 1) % s.cfg.Names
		}
		seen[i] = true
		at.names = append(at.names, nameOf(s.prefix, i))
		at.slots = append(at.slots, int32(slot))
		if at.fetch {
			s.mu.Lock()
			at.fresh = append(at.fresh, !s.published[i])
			s.mu.Unlock()
		}
	}
	return at
}

// submit fills the slots (a publish: the names' bytes; a fetch: a
// pattern no name stands for) and submits the view.
func (s *soak) submit(l *lender, at *attempt, rep *Report) error {
	for k, slot := range at.slots {
		if at.fetch {
			clear(l.mem.Slot(int(slot)))
		} else {
			fill(l.mem.Slot(int(slot)), at.names[k])
		}
	}
	if !at.fetch {
		// From now on these names may be stored: a fetch may find them.
		for _, name := range at.names {
			s.markPublished(name)
		}
	}
	v := contract.View{Groups: []contract.Group{{Region: 0, Slots: at.slots, Names: at.names}}}
	var err error
	if at.fetch {
		at.a, err = l.backend.Fetch(v, nil)
		rep.Fetches++
	} else {
		at.a, err = l.backend.Publish(v, nil)
		rep.Publishes++
	}
	if err != nil {
		return fmt.Errorf("%s: submit: %w", l.name, err)
	}
	return nil
}

// check checks a quiesced attempt: every delivered row of a fetch holds
// exactly its name's bytes, and no name that no publish was ever given
// was delivered.
func (s *soak) check(l *lender, at *attempt, rep *Report) error {
	if _, ok := at.a.Outcome(); !ok || !at.a.Quiesced() {
		return fmt.Errorf("%s: Done closed before the outcome and quiescence", l.name)
	}
	return s.checkOutcome(l, at, rep)
}

// checkOutcome checks an attempt's final outcome: its delivered rows
// hold their names' bytes, and no never-published name arrived.
func (s *soak) checkOutcome(l *lender, at *attempt, rep *Report) error {
	out, _ := at.a.Outcome()
	for k, delivered := range out.Delivered {
		switch {
		case !at.fetch:
		case delivered && at.fresh[k] && !s.isPublished(at.names[k]):
			return fmt.Errorf("%s: fetched %q, which no publish was ever given", l.name, at.names[k])
		case delivered:
			slot := l.mem.Slot(int(at.slots[k]))
			if off, same := matches(slot, at.names[k]); !same {
				return fmt.Errorf("%s: fetched %q into slot %d, delivered, but byte %d differs from what was published", l.name, at.names[k], at.slots[k], off)
			}
			rep.RowsChecked++
			rep.BytesChecked += int64(len(slot))
		case at.fresh[k]:
			rep.MissesChecked++
		}
	}
	return nil
}

func (s *soak) markPublished(name []byte) {
	var i int
	if _, err := fmt.Sscanf(string(name[len(s.prefix)+1:]), "%d", &i); err == nil {
		s.mu.Lock()
		s.published[i] = true
		s.mu.Unlock()
	}
}

func (s *soak) isPublished(name []byte) bool {
	var i int
	if _, err := fmt.Sscanf(string(name[len(s.prefix)+1:]), "%d", &i); err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.published[i]
}
