package binding

import (
	"time"

	"github.com/kvshare/kvshare/contract"
)

// countLocked counts n rows of a's direction ending with status s.
func (b *Backend) countLocked(a *attempt, s contract.RowStatus, n int64) {
	b.rows[s] += n
	b.dirRows[a.dir][s] += n
}

// Stats returns a snapshot of the backend's counters. Rows counts each
// row once, by its final status: the driver's verdict, Fault for a call
// refused or broken as a whole, Cancelled for a row never handed over.
// CallsInFlight counts calls whose access is still open, not those held
// as unprovable (CallsUnprovable, now: a Reclaim gives them back);
// RowsLent and BytesLent count both. OldestCall is the age
// of the oldest call in flight.
func (b *Backend) Stats() contract.Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := contract.Stats{
		Attempts:        b.attempts,
		AttemptsOpen:    int64(len(b.open)),
		Rows:            b.rows,
		FetchRows:       b.dirRows[fetch],
		PublishRows:     b.dirRows[publish],
		CallsInFlight:   b.flight.n,
		CallsUnprovable: b.unprovable,
		RowsLent:        b.rowsLent,
		BytesLent:       b.bytesLent,
		Lookups:         b.lookups,
		LookupNames:     b.lookupNames,
		LookupPresent:   b.lookupPresent,
		Reclaims:        b.reclaim.reclaims,
		CallsReclaimed:  b.reclaim.calls,
		BytesReclaimed:  b.reclaim.given,
	}
	if c := b.flight.head; c != nil {
		s.OldestCall = time.Since(c.began)
	}
	if b.violation != nil {
		s.Violation = b.violation.Error()
	}
	return s
}
