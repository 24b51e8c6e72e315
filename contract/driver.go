package contract

import "context"

// Capabilities is what a driver declares about itself. The backend reads
// them once, when it is built, and refuses anything a driver did not
// declare before the driver is asked.
type Capabilities struct {
	// Put and Get are the directions the driver serves; a driver may serve
	// only one. Calls in an undeclared direction are never made.
	Put, Get bool
	// Cancel: Operation.Cancel ends rows no worker has started (they end
	// Cancelled). Without it Cancel may do nothing.
	Cancel bool
	// AbsentIsMiss: a get of an absent key ends Miss with the slot
	// untouched. Without it an absent key may end Fault, possibly with
	// access unprovable.
	AbsentIsMiss bool
	// DeviceMemory: Device regions may be registered. Without it only Host
	// regions are, and the binding never offers a Device one.
	DeviceMemory bool
	// MultiSpan: a row may have more than one span. Without it every row
	// has exactly one.
	MultiSpan bool
	// Hints: Get accepts a non-nil hint. Without it every get's hint is
	// nil and a fetch with a hint is refused before the driver is asked.
	Hints bool
	// MaxRowsPerOp caps the rows of one call; 0 means no cap.
	MaxRowsPerOp int
	// LookupInFlight: the driver's [Looker] answers InFlight for every
	// name being written, by this driver (from a put's admission, a row
	// no worker has taken yet included) or by another writer. Without it
	// a name being written may read Absent, Unknown or InFlight. Either
	// way InFlight is never answered for a name no one writes.
	LookupInFlight bool
	// PresenceFromIndex: the driver's [Looker] answers Present from the
	// store's index: the index holds a whole object under the key, and a
	// get made then may still end Fault, where the store keeps listing a
	// holder of the data that stopped answering until it notices (see
	// [Looker], rule 1). Without it, Present means a get made then would
	// read the object whole.
	PresenceFromIndex bool
}

// Registration is a driver's handle for a registered region (or, from
// [RegionsTogether], a batch of regions). Zero means "none"; a driver never
// hands out zero for a live registration.
type Registration uint64

// Driver talks to one store on behalf of one binding. It owns everything
// below one call: batching, worker goroutines, the store's SDK, the object
// format, and the evidence that access to memory has ended.
//
// The caller (the binding) calls Register before any Put or Get touching
// the region, and Close last. Put, Get, Operation methods and Capabilities
// may be called from any goroutine, concurrently. The package
// documentation lists the rules a driver must keep; the conformance
// module checks each of them.
type Driver interface {
	// Capabilities returns what the driver serves. It must return the same
	// value every time.
	Capabilities() Capabilities

	// Register makes a region's memory available to the store. On
	// success the region is live until Unregister succeeds. It fails with
	// an error wrapping [ErrDriverRejected] when nothing was registered,
	// or with a [*RegistrationError] otherwise (see there). A
	// RegistrationError with a non-zero handle means "may be live"
	// whatever else its error wraps: the handle decides, and the caller
	// revokes it before letting the memory go.
	Register(r SlotRegion) (Registration, error)

	// Unregister revokes a registration. While an operation whose spans
	// lie in the region has access Open or Unprovable it fails with
	// [ErrDriverRejected] and the region stays registered. Only a nil
	// error means the store will never touch the region again.
	Unregister(reg Registration) error

	// Put starts writing the batch's rows to the store and returns at once
	// with an operation. If it returns an error, the error wraps
	// [ErrDriverRejected] and nothing was recorded or started. onChange is
	// called as the driver rules describe.
	Put(b RowBatch, onChange func()) (Operation, error)

	// Get starts reading the batch's rows from the store into their spans.
	// The hint is nil unless the driver declares [Capabilities.Hints].
	// Errors as for Put.
	Get(b RowBatch, h Hint, onChange func()) (Operation, error)

	// Drain stops taking work, cancels rows no worker has started, and
	// waits within ctx for running ones. It returns true only if every
	// operation's access ended and none is Unprovable. Calling it again is
	// allowed and answers the same question anew.
	Drain(ctx context.Context) bool

	// Close releases the driver's store resources. Call it only after
	// Drain returned true and every registration was revoked; otherwise it
	// fails with [ErrDriverRejected] and keeps everything.
	Close() error
}

// Operation is one admitted Put or Get call.
type Operation interface {
	// Poll appends one status per row of the batch, in batch order, to
	// dst[:0] and returns them as OpState.Rows with the access state.
	// Once dst has room for every row it allocates nothing, so a caller
	// that polls on every callback can keep one buffer per operation.
	// The statuses belong to the caller: the driver never keeps dst. A
	// final row status never changes; access leaves Open only once every
	// row is final, and then never changes again.
	Poll(dst []RowStatus) OpState
	// Cancel asks the driver to stop. It is advisory: with
	// [Capabilities.Cancel], rows not yet started end Cancelled; rows in
	// the store's hands run on. Cancel returns at once; it never waits
	// for the store.
	Cancel()
}

// RegionsTogether is an optional interface of a [Driver] that registers a
// batch of regions as one unit (a store that registers a whole address
// window at once, say). Find it by type assertion, like io.WriterTo.
type RegionsTogether interface {
	// RegisterRegions validates the whole batch before the store is asked
	// (bad geometry: an error wrapping [ErrDriverRejected] and
	// [ErrInvalidRegion], nothing registered), then registers every region
	// under one handle. Failures as for [Driver.Register]: a
	// [*RegistrationError] with a non-zero handle may be live and must be
	// revoked.
	RegisterRegions(specs []RegionSpec) (Registration, error)
	// UnregisterRegions revokes a batch. While any region of it is busy it
	// fails with [ErrDriverRejected] and the whole batch stays registered.
	UnregisterRegions(reg Registration) error
}
