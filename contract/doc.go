// Package contract holds the types and interfaces every kvshare module
// shares; it imports only the standard library. A lender lends regions
// ([SlotRegion]). A lease holder submits a [View] (rows: a slot and a
// name each) to a [Backend] as a fetch or a publish and gets an
// [Attempt]: its [Outcome] says which rows were delivered, its
// quiescence that no store can touch the slots any more; only then may
// the slots be reused. The backend cuts a view into calls ([RowBatch])
// for a [Driver], which answers each with an [Operation]. A row carries
// its name, not its key: the driver builds the key with
// [RowBatch.AppendKey], uses exactly that key, assumes nothing else of
// its grammar, and borrows names until the operation's access ends.
//
// # Driver rules
//
// A driver must keep these rules. The conformance module checks each; the
// backend contains a driver that breaks one (it holds the call as
// unprovable and refuses later submissions).
//
//  1. Admission. Put and Get either fail at once, before anything is
//     recorded or started, with an error wrapping [ErrDriverRejected]
//     (it certifies nothing escaped), or return an operation; from then
//     on every failure is a row result. They never panic, and never
//     return a nil operation without an error.
//  2. Callbacks. onChange is called whenever row results or access
//     change; never under a lock the caller could need (it may call
//     Poll); before the worker that caused the change counts itself
//     finished; never after a Drain that returned true.
//  3. Results, then access end, each once. Poll returns one status per
//     batch row; a final status never changes. Access leaves Open only
//     after every row is final, then never changes (Unprovable is
//     terminal, except through a [Recycler]'s Recycle). A get writes
//     nothing outside its rows' spans: an object shorter than its row is
//     a Fault, a longer one is refused (Fault, nothing written).
//  4. Busy regions. Unregister of a region covered by an operation whose
//     access is Open or Unprovable fails with [ErrDriverRejected]; the
//     region stays registered.
//  5. Drain. Drain(ctx) rejects later Put and Get, cancels rows no worker
//     took, and waits within ctx. It returns true only if every
//     operation's access ended and none is Unprovable.
//  6. Close. Close comes last: after a Drain that returned true, with
//     every region unregistered.
//
// Verdicts follow [RowStatus]: a put is Ready only when a complete
// readable object stands behind the key; a get of an absent key is Miss
// when the driver declares [Capabilities.AbsentIsMiss]; a key another
// writer is still writing is NotReady in both directions.
//
// Errors are sentinels wrapped with a reason ([ErrInvalidSubmission],
// [ErrSubmissionRejected], [ErrConstructionRejected], [ErrDriverRejected],
// [ErrInvalidRegion]), and [*RegistrationError] for a registration that
// may be live. Why the rules read as they do: docs/design/contract.md
// (section "Why the six driver rules read as they do"). Tables of
// verdicts and capabilities: the module's README.md.
package contract
