// Package contract holds the types and interfaces every kvshare module
// shares: the lender's regions and views, the backend a lease holder
// talks to, and the driver boundary a store implements. It imports only
// the standard library, so a store driver, a test and an engine can all
// depend on it without pulling anything else in.
//
// # The world around it
//
// A lender owns memory regions ([SlotRegion]) and lends them under a hold.
// A lease holder builds a [View] (rows: a slot and a name each) and
// submits it to a [Backend] as a fetch or a publish; it gets an [Attempt]
// back. The attempt reports an [Outcome] (which rows were delivered) and,
// separately, quiescence (no store can touch the slots any more). Slots
// may be reused only after quiescence.
//
// The backend cuts a view into calls and hands each call, a [RowBatch],
// to a [Driver]. The driver answers with an [Operation] it updates as the
// store works.
//
// # Names and keys
//
// A row carries its name ([Row.Name]), not its store key. The batch
// carries a [KeyMaker], and the driver builds each key itself, straight
// into its own buffer, with [RowBatch.AppendKey]: the submitter builds
// no key strings, which measured as most of the submit path's cost when
// it did. A driver stores and reads each row under exactly that key and
// assumes nothing else of its grammar. Names are borrowed until the
// operation's access ends. [Direction] names which way a row moves, for
// every module that needs to say so.
//
// # Driver rules
//
// A driver must keep these rules. The conformance module checks each of
// them; the backend contains a driver that breaks one (it holds the call
// as unprovable and refuses later submissions).
//
//  1. Admission. Put and Get either fail at once with an error wrapping
//     [ErrDriverRejected], before anything is recorded or started (that
//     error certifies nothing escaped), or return an operation. After
//     admission they never fail: every failure becomes a row result. They
//     never panic, and never return a nil operation without an error.
//  2. Callbacks. onChange is called whenever an operation's row results or
//     access state change; never under a lock the caller could need (the
//     caller may call Poll from it); and before the worker that caused the
//     change counts itself finished, so Drain cannot return before the
//     last callback. No callback follows a Drain that returned true.
//  3. Results, then access end, each recorded once. Poll returns exactly
//     one status per batch row. A final status never changes. Access
//     leaves Open only after every row is final, and never changes again;
//     Unprovable is terminal. Rows of a get stay inside their spans: the
//     store never writes a byte outside them, an object shorter than its
//     row is a Fault, and an object longer than its row is refused (Fault,
//     nothing written).
//  4. Busy regions. Unregister of a region that an operation with access
//     Open or Unprovable covers fails with [ErrDriverRejected] and leaves
//     the region registered.
//  5. Drain. Drain(ctx) stops taking work (later Put/Get are rejected),
//     cancels rows no worker took, and waits within ctx. It returns true
//     only if every operation's access ended and none is Unprovable.
//  6. Close. Close comes last, after a Drain that returned true and with
//     every region unregistered.
//
// Verdicts follow [RowStatus]: a put is Ready only when a complete
// readable object stands behind the key; a get of an absent key is Miss
// when the driver declares [Capabilities.AbsentIsMiss]; a key another
// writer is still writing is NotReady in both directions.
//
// # Errors
//
// Errors are sentinels wrapped with a reason: [ErrInvalidSubmission],
// [ErrSubmissionRejected], [ErrConstructionRejected], [ErrDriverRejected],
// [ErrInvalidRegion]; and [*RegistrationError] for a registration that
// may be live.
package contract
