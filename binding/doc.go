// Package binding is kvshare's backend over any store driver, the way
// database/sql is over database/sql/driver. It imports only contract,
// keys, rowbatch and storeconfig.
//
// [Regions] owns a lender's regions registered with one [contract.Driver]
// under the lender's [Hold], and releases the hold once every region is
// confirmed unregistered. [Backend], a [contract.Backend] over the driver
// of a Regions, checks each submitted view, cuts each group into calls
// (package rowbatch) with its [keys.Stem] as key maker, and hands each
// call to the driver as soon as it is cut, on the submitter's goroutine.
// It learns of progress only through the driver's onChange, keeps no
// queue and runs no worker: its one goroutine, started by Shutdown,
// drains the driver and unbinds the regions once no attempt, lookup or
// reclaim is under way. Every method is safe for concurrent use, and
// every blocking one waits within its own context, whatever other
// goroutines wait for.
//
// # What it promises
//
//   - Memory lent to a store is given back only on proof that access
//     ended. An attempt quiesces only when every call it handed over has
//     access Ended; a call whose access is Unprovable, or whose driver
//     broke the protocol, keeps the attempt open, its slots lent, its
//     regions registered and the hold held, and is counted in
//     [contract.Stats].CallsUnprovable, until [Backend.Reclaim] has a
//     [contract.Recycler] driver tear down what could still touch them
//     (never for a driver that broke the protocol).
//   - A driver that breaks the protocol (a panic, an error that does not
//     wrap [contract.ErrDriverRejected], an operation with an error or
//     none without one, a Poll that breaks rule 3 of package contract) is
//     contained: the call is held as unprovable, the violation is logged
//     once and named by every later submission's error ([ViolationError]);
//     calls not yet handed over end Cancelled; calls in the driver run on.
//   - An attempt with a deadline ([Backend.PublishBy], [Backend.FetchBy])
//     has its outcome forced then ([ErrDeadline]); its quiescence still
//     waits for every access to end.
//   - [Backend.Shutdown] never calls the driver. It returns nil once the
//     hold's Release has returned, else the labels of what is still held.
//
// The owner's cleanup order: Shutdown returns no labels (the binding has
// drained the driver, unregistered every region and released the hold;
// [Backend.Closed] is closed); then whoever opened the driver calls its
// Close, last; only then may the lender free the memory.
//
// # What it refuses
//
// [Bind] refuses a region with bad geometry, a list with no region the
// driver can reach, and a registration failure that certifies nothing
// escaped: it releases the hold and returns an error wrapping
// [contract.ErrConstructionRejected]. A failure that may have left a
// registration live keeps the hold ([*LiveRegistrationError]). A view
// that does not fit the regions or the driver is refused before any
// driver call ([SubmissionError], wrapping [contract.ErrInvalidSubmission]);
// every submission after Shutdown or a violation, with
// [contract.ErrSubmissionRejected]. [Regions.Unbind] of regions a backend
// owns is refused ([ErrOwned]); [New] refuses regions Unbind was called on.
//
// Every refusal, and what the backend counts and logs: the module's
// README.md. Why: docs/design/binding.md.
package binding
