// Package mooncakedrv is kvshare's driver for Mooncake Store: a
// [contract.Driver] over a mooncakesdk.Client (the store's C ABI loaded
// with purego, or the in-memory fakesdk). [Open] reads a store config and
// opens a client and a driver over it; [New] takes a client, which the
// driver then owns. Subpackage pool starts and stops loopback pools for
// tests, kvshare doctor and the benchmark.
//
// It runs on the driver kit (package drivekit), which keeps the
// contract's machinery; this package keeps what is Mooncake's. It declares Put, Get, Cancel, AbsentIsMiss and PresenceFromIndex
// (lookups); host memory only; one span per row; no hints; no row cap
// of its own. Every admitted call is cut into parts of at most
// RowsPerCall rows and BytesPerCall bytes (a single larger row goes
// alone), each run by a fixed pool of Workers goroutines (gets first),
// one store call at a time; parts queued behind busy workers share a
// call of their direction up to those caps, never with one key twice,
// and at most CallsInFlight workers of a direction are inside the store
// at once ([Config]). A key holding a NUL byte cannot cross to C: the
// batch or lookup holding it is refused.
//
// Verdicts (verdict.go is the one table):
//
//   - Put: 0 proves nothing, so every 0 is confirmed by one batch_is_exist
//     per part: 1 Ready, 0 NotReady. A key a put of this driver is writing
//     now is NotReady without an SDK call. -200 Declined; -800 Fault with
//     the access unprovable; -900, -901 and -1 Fault with the key left
//     open; anything else Fault.
//   - Get: a byte count equal to the row Ready; a shorter object Fault (it
//     landed in the slot's head); -600 Fault (a longer object, nothing
//     written); -704 Miss; -703 NotReady; -707 read once more, Ready only
//     if whole, else Fault; -800 Fault with the access unprovable;
//     anything else Fault.
//   - A call that fails as a whole with the library's -1, or panics inside
//     the binding, makes every row of every part in it Fault and their
//     access unprovable; a -800 makes every part in its call unprovable.
//
// A key left open may still see its put end at the master, so the driver
// never puts it again: a later put of it is Ready if batch_is_exist says
// 1, else Declined ([Stats].RowsDeclinedLeftOpen). The ledger never
// forgets a key ([Stats].KeysLeftOpen).
//
// An operation's access ends when every SDK call of every part returned,
// none answered -800, and none failed as a whole or panicked; otherwise
// it is Unprovable until a Recycle ([contract.Recycler]) destroys the
// client: its region stays registered, Drain answers false and Close is
// refused. An SDK call over rows of several parts that leaves one
// transfer unproven leaves every part with a row in it Unprovable.
// Recycle destroys the client (which joins its transfer threads) once no
// part is inside the SDK, then opens a fresh one with Config.Reopen.
//
// Lookups: one batch_is_exist (1 Present, 0 Absent), get_size for the
// first key answering 0 (REPLICA_IS_NOT_READY: InFlight), the driver's
// own puts InFlight; Present is the master's index (PresenceFromIndex:
// README.md); at most [MaxLookupsInStore] inside the store at once.
//
// Refusals (after Drain or Close, a repeated name, a row of more than
// one span, a span outside the live registrations, a hint, a Device
// region) are the kit's: [contract.ErrDriverRejected], nothing recorded.
// The verdict table, its evidence and the decisions:
// docs/design/mooncakedrv.md; the real-pool tier, the fault matrix: README.md.
package mooncakedrv
