// Package mooncakedrv is kvshare's driver for Mooncake Store: a
// [contract.Driver] over a mooncakesdk.Client (the store's C ABI loaded
// with purego, or the in-memory fakesdk). [Open] reads a store config and
// opens a client and a driver over it; [New] takes a client, which the
// driver then owns. Subpackage pool starts and stops loopback pools for
// tests, kvshare doctor and the benchmark.
//
// The driver is the driver kit (package drivekit) over the store calls
// of this package: the kit keeps the contract's machinery (admission,
// parts, workers, Cancel, Drain, Close, registrations, the lookup
// budget, Recycle's waits and the counters), and this package what is
// Mooncake's: the SDK calls of one store call, the verdict table, the
// ledger of keys left open, the client's teardown and the pool package.
//
// It declares Put, Get, Cancel, AbsentIsMiss and PresenceFromIndex
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
// Rows of parts no worker took end Cancelled. Recycle waits for the
// parts inside the SDK, destroys the client (which joins its transfer
// threads), ends every Unprovable access, and opens a fresh client with
// Config.Reopen.
//
// Lookups: one batch_is_exist for the batch's keys (1 Present, 0
// Absent, a negative code Unknown), a key a put of this driver writes
// InFlight (without asking the store when every key is one), and the
// first key answering 0 asked once more with get_size, which tells a
// put in flight (REPLICA_IS_NOT_READY: InFlight) from an absent key
// (OBJECT_NOT_FOUND: Absent): that row is the one a lookup's bound
// stops at. Later keys answering 0 are Absent (the driver does not
// declare LookupInFlight). Both answer from the master's metadata,
// which keeps listing a provider's objects until its client_ttl runs
// out: a provider frozen, killed or cut off leaves its objects Present
// for that long while a get of them faults (-800), hence
// PresenceFromIndex. The calls run on a goroutine of the kit's, which a
// lookup whose context ends abandons (its names Unknown); at most
// [MaxLookupsInStore] are inside the store at once, and a lookup that
// finds that many answers Unknown at once.
//
// It refuses, with [contract.ErrDriverRejected] and recording nothing, a
// call while draining or closed, a batch whose names repeat or whose key
// would hold a NUL byte, a row of more than one span, a span outside
// every live registration, a hint, and a Device region. Drain makes no
// SDK call; Close, only after a Drain that returned true with every
// region unregistered, destroys the client.
//
// The verdict table with the store's evidence for each row, the
// access-end evidence and the decisions: docs/design.md (section
// "Mooncake"). How to run the real-pool tier and the fault matrix: the
// module's README.md.
package mooncakedrv
