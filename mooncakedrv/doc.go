// Package mooncakedrv is kvshare's driver for Mooncake Store: a
// [contract.Driver] over a mooncakesdk.Client (the store's C ABI loaded
// with purego, or the in-memory fakesdk). [Open] reads a store config and
// opens a client and a driver over it; [New] takes a client, which the
// driver then owns. Subpackage pool starts and stops loopback pools for
// tests, kvshare doctor and the benchmark.
//
// It declares Put, Get, Cancel, AbsentIsMiss and PresenceFromIndex
// ([Driver.Lookup]); host memory only; one span per row; no hints; no row cap
// of its own. Every admitted call is cut into parts of at most RowsPerCall
// rows and BytesPerCall bytes (a single larger row goes alone), each run by a
// fixed pool of Workers goroutines (package scheduler: gets first), one SDK
// call at a time; parts queued behind busy workers share a call of their
// direction up to those caps, never with one key twice, and at most
// CallsInFlight workers of a direction are inside the store at once
// ([Config]). At admission every row's key is written with the batch's key
// maker straight into the packed key list the part's SDK call takes.
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
// refused. Rows of parts no worker took end Cancelled. Recycle waits for
// the parts inside the SDK, destroys the client (which joins its
// transfer threads), ends every Unprovable access, and opens a fresh
// client with Config.Reopen.
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
