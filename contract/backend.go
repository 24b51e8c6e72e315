package contract

import (
	"context"
	"time"
)

// Backend moves views between a lender's regions and a store. It is what a
// lease holder talks to; the binding module of kvshare is the implementation
// over any [Driver], the way database/sql is over database/sql/driver.
//
// All methods are safe for concurrent use.
type Backend interface {
	// Fetch starts moving the view's rows from the store into their slots.
	// The whole view is checked first: a bad view gets an error wrapping
	// [ErrInvalidSubmission] that names the group and row, and nothing
	// reaches the store. After a protocol violation or Shutdown, every
	// submission gets [ErrSubmissionRejected].
	Fetch(v View, h Hint) (Attempt, error)

	// Publish starts moving the view's rows from their slots into the
	// store. The destination must be nil. Errors as for Fetch.
	Publish(v View, d Destination) (Attempt, error)

	// Shutdown stops taking submissions, forces the outcome of every open
	// attempt, and waits within ctx for attempts to quiesce. It returns the
	// labels of what is still held: attempts not quiesced, regions still
	// registered. An empty answer means nothing is held any more: no slot
	// can be touched, no region is registered, and the lender's hold is
	// free to go (the binding module releases it itself before it answers
	// empty). Only then may the owner close the driver. Shutdown never
	// calls the driver, and returns early once what is left can never
	// change.
	Shutdown(ctx context.Context) []string

	// Stats returns a snapshot of the backend's counters.
	Stats() Stats
}

// Attempt is one submitted view. Its outcome and its quiescence are two
// separate facts, each set once: the outcome says which rows arrived;
// quiescence says no driver can touch the attempt's slots any more. The
// slots may be reused only after quiescence, which may come after the
// outcome, and may never come (when a driver cannot prove its access
// ended, the memory is kept for good).
//
// All methods are safe for concurrent use; only Wait blocks.
type Attempt interface {
	// Outcome returns the outcome and true once it is known; until then
	// the zero Outcome and false.
	Outcome() (Outcome, bool)
	// Known returns a channel closed once the outcome is known.
	Known() <-chan struct{}
	// Wait waits within ctx for the outcome and returns it, or the zero
	// Outcome and ctx's error if ctx ends first. It does not wait for
	// quiescence: the slots may be reused only once Done is closed.
	Wait(ctx context.Context) (Outcome, error)
	// Quiesced reports whether no driver can touch the attempt's slots
	// any more. Once true it stays true; it is never true before the
	// outcome is known.
	Quiesced() bool
	// Cancel asks the attempt to stop. It is advisory: rows no driver has
	// started end Cancelled, started ones run on, and quiescence still
	// waits for them.
	Cancel()
	// Done returns a channel closed at quiescence.
	Done() <-chan struct{}
}

// Stats is a snapshot of a backend's counters. Counts are totals since the
// backend was built unless they say "now".
type Stats struct {
	// Attempts counts submissions accepted; AttemptsOpen those not yet
	// quiesced now.
	Attempts     int64
	AttemptsOpen int64
	// Rows counts rows by their final status, indexed by [RowStatus]
	// (Rows[Pending] is always 0). PublishRows and FetchRows split the
	// same counts by direction: Rows is their sum.
	Rows                   [RowStatusCount]int64
	PublishRows, FetchRows [RowStatusCount]int64
	// CallsInFlight counts driver calls started whose access has not ended
	// now; CallsUnprovable the calls whose access the driver could not
	// prove ended, now (their memory is kept until a reclaim gives it
	// back, or for good).
	CallsInFlight   int64
	CallsUnprovable int64
	// RowsLent and BytesLent are the rows and bytes of slots a driver may
	// still touch now (in flight or unprovable).
	RowsLent  int64
	BytesLent int64
	// OldestCall is the age of the oldest call in flight now, 0 if none.
	OldestCall time.Duration
	// Violation is the driver protocol violation that stopped the backend,
	// or "" if none.
	Violation string
	// Lookups counts lookups asked; LookupNames the names they asked the
	// driver about, LookupPresent those it answered Present.
	Lookups, LookupNames, LookupPresent int64
	// Reclaims counts the driver's recycles that ended every access
	// ([Recycler]); CallsReclaimed and BytesReclaimed the unprovable
	// calls they gave back and those calls' bytes.
	Reclaims, CallsReclaimed, BytesReclaimed int64
}
