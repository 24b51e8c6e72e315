package binding

import (
	"errors"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/contract"
)

// ErrDeadline is wrapped by the fault of an outcome forced at its
// attempt's deadline ([Backend.PublishBy], [Backend.FetchBy]). The fault
// wraps [ErrOutcomeForced] too, and the attempt's earlier fault when it
// had one.
var ErrDeadline = errors.New("kvshare/binding: deadline passed")

// PublishBy is [Backend.Publish] with a deadline: if the attempt's
// outcome is not known when the deadline passes, the backend forces it
// then. Rows with a verdict keep it; rows handed to the driver without
// one read Pending and are undelivered, whatever the driver says later;
// rows never handed over end Cancelled, and no more are handed over. The
// fault wraps [ErrDeadline] and [ErrOutcomeForced]. The calls the driver
// still holds are asked to Cancel, so rows no worker took end Cancelled
// in the driver and give their slots back at once.
//
// Quiescence is not forced: Done is closed only once every call handed
// over has access Ended, as always, so the slots of rows still in the
// store's hands stay lent until the store lets them go (publish at the
// deadline, drain later). A deadline already passed at submission forces
// the outcome before any call reaches the driver: every row Cancelled.
// The zero deadline is none: PublishBy(v, d, time.Time{}) is Publish.
func (b *Backend) PublishBy(v contract.View, d contract.Destination, deadline time.Time) (contract.Attempt, error) {
	return b.submit(publish, v, nil, d, deadline)
}

// FetchBy is [Backend.Fetch] with a deadline, as [Backend.PublishBy]
// says: at the deadline the outcome is forced (fault wrapping
// [ErrDeadline]), while quiescence still waits for every call's access
// to end. A fetched slot whose row reads Pending may still be written
// until then: reuse it only after Done.
func (b *Backend) FetchBy(v contract.View, h contract.Hint, deadline time.Time) (contract.Attempt, error) {
	return b.submit(fetch, v, h, nil, deadline)
}

// armDeadlineLocked arranges for the attempt's outcome to be forced at
// deadline (none when it is zero), or forces it now when the deadline
// has passed already. It reports whether an outcome was published.
func (b *Backend) armDeadlineLocked(a *attempt, deadline time.Time) bool {
	if deadline.IsZero() {
		return false
	}
	wait := time.Until(deadline)
	if wait <= 0 {
		published, _ := b.expireLocked(a, deadline) // nothing handed over yet: nothing to cancel
		return published
	}
	a.deadline = time.AfterFunc(wait, func() { b.expire(a, deadline) })
	return false
}

// expire forces the attempt's outcome at its deadline, unless it is
// known already, and asks the driver to cancel the calls it holds.
func (b *Backend) expire(a *attempt, deadline time.Time) {
	b.mu.Lock()
	published, cancels := b.expireLocked(a, deadline)
	b.mu.Unlock()
	b.cancelCalls(cancels)
	b.callWake(published)
}

// expireLocked forces the outcome of an attempt whose deadline passed
// and marks every call of it to be cancelled (one inside Put or Get now
// is asked as its operation arrives); it returns whether the outcome was
// published and the calls to ask now.
func (b *Backend) expireLocked(a *attempt, deadline time.Time) (bool, []*call) {
	if a.known {
		return false, nil
	}
	fault := fmt.Errorf("%w: %w: the attempt's deadline (%s) came before every row's verdict",
		ErrOutcomeForced, ErrDeadline, deadline.Format(time.RFC3339Nano))
	if a.fault != nil {
		fault = fmt.Errorf("%w; before that: %w", fault, a.fault)
	}
	published := b.forceLocked(a, fault)
	return published, a.cancelLocked(0)
}
