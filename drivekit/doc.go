// Package drivekit is the driver contract's machinery written once: a
// [Driver] that implements [contract.Driver], [contract.Looker] and
// [contract.Recycler] over a [Store], the narrow interface a store's
// author writes. A store says three things: how to move the rows of one
// store call ([Store.Transfer], its verdict per row in [End]), which
// keys it holds ([Looker]), and what it can prove ([End.Unprovable]:
// "this call may still run"; [Teardown]: "tearing this client down ends
// every transfer"). The kit keeps every rule of package contract:
//
//   - Admission is all or nothing: the driver's state, the direction,
//     the hint, the row cap, the batch against the live registrations
//     ([rowbatch.Check]), every key's length and, with a [KeyChecker],
//     every key are checked before anything is recorded; after
//     admission every failure is a row status. Keys are built once, at
//     admission, outside the kit's lock (the key maker is the caller's
//     code); the batch is checked again if the live regions moved
//     meanwhile.
//   - A batch is cut into store calls of at most [Options.CallRows]
//     rows and [Options.CallBytes] bytes, run in admission order by at
//     most [Options.Workers] goroutines, started on demand: an idle
//     driver runs no goroutine. With [Options.GetsFirst] they run on a
//     gets-first scheduler pool instead (gets pass waiting puts),
//     stopped by a Drain that returns true; there [Options.JoinCalls]
//     lets queued calls of one direction share a store call while the
//     workers are busy (no key twice; [Call.Parts] says whose rows are
//     whose) and [Options.CallsInFlight] bounds the calls of a
//     direction inside the store.
//   - A row's status is recorded only after Transfer returned, and
//     access leaves Open with the last row's; a row the store cannot
//     prove done makes access Unprovable, which only a Recycle ends.
//     Poll reads rows and access in one step under the kit's lock and
//     allocates nothing once dst has room.
//   - onChange runs on a kit goroutine, outside the kit's lock, after
//     the change it reports; Drain waits for it. A panic in a store
//     call ends its rows Fault; one in onChange is logged and dropped.
//   - Cancel ends the rows no worker took; a store sees
//     [Call.Cancelled] for the rows it holds. Drain ends the queued
//     rows and answers true only once no call, callback or lookup is
//     inside and nothing is Unprovable; Close comes after it.
//   - A region stays registered while an Open or Unprovable operation
//     has a span in it ([ErrRegionBusy]). A store's Keep, Release and
//     Revoke ([Regions], [Registrar]) run outside the kit's lock,
//     counted inside the store; a revocation that fails keeps the
//     region registered.
//   - Lookups are refused when bad or late, answer InFlight for the
//     keys this driver puts, and a lookup that may block runs on a kit
//     goroutine with its own copy of the keys, so it can be abandoned at
//     the caller's deadline; it counts as inside the store until it
//     returns. [Options.LookupsInStore] bounds those inside: beyond it
//     a lookup answers Unknown at once.
//   - Recycle refuses every call while it runs, waits for the calls
//     and lookups inside the store, then tears the store's client down
//     and ends every Unprovable access.
//
// [Stats] is the counters metrics read, the same for every store.
// [Driver.Pause], [Driver.RowsIn], [Driver.Workers] and the other
// accessors serve stores' scenario hooks and tests.
//
// A toy store of about a hundred lines: Example. Why: docs/design/drivekit.md.
package drivekit
