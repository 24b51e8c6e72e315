// Package mooncakedrv is kvshare's driver for Mooncake Store: a
// [contract.Driver] over a mooncakesdk.Client (the store's C ABI loaded
// with purego, or the in-memory fakesdk). Subpackage pool starts and
// stops a loopback pool (master and segment provider) from a Mooncake
// folder, for tests, kvshare doctor and the benchmark.
//
// # What it declares
//
// Put, Get, Cancel and AbsentIsMiss; host memory only (a Device region is
// refused before the store is asked); one span per row; no hints; no row
// cap of its own: every admitted call is cut into parts of at most
// RowsPerCall rows and BytesPerCall bytes (a single larger row goes
// alone), and each part runs on a fixed pool of Workers goroutines
// (package scheduler: gets first), one SDK call at a time.
//
// # Keys
//
// At admission the driver writes every row's key with the batch's key
// maker straight into the packed, NUL-separated key list its part's SDK
// call takes (mooncakesdk.KeyList): one pass, no Go string. A key that
// would hold a NUL byte refuses the whole call. The names are not kept.
//
// # Verdicts (ARCHITECTURE §9)
//
// Puts: 0 proves nothing (Mooncake answers it for a stored object, an
// existing one and one another writer has in flight), so every 0 is
// confirmed by one batch_is_exist per part: 1 Ready, 0 NotReady. A key a
// put of this driver is writing now is NotReady at once, without an SDK
// call. -200 Declined; -800 Fault with the access unprovable; -900, -901
// and -1 Fault with the key left open (see the ledger); anything else
// Fault. Gets: the object's byte count equal to the row Ready; a shorter
// object Fault (it landed in the slot's head); -600 Fault (a longer
// object: nothing written); -704 Miss; -703 NotReady; -707 read once
// more, Ready only if whole, otherwise Fault; -800 Fault with the access
// unprovable; anything else Fault. A whole call that fails with the
// library's -1, or a panic inside the binding, makes every row of its
// part Fault and the access unprovable. The mapper is verdict.go, one
// table.
//
// # The ledger
//
// A put answered -900, -901 or -1 may still end at the master later
// (matched by key and client alone), so its key is left open: the driver
// never puts that key again, for its whole life. A later put of it is
// Ready if batch_is_exist says 1, else Declined, and counted apart
// ([Stats].RowsDeclinedLeftOpen). The ledger never forgets a key; its
// size is [Stats].KeysLeftOpen.
//
// # Access-end evidence
//
// An operation's access ends when every SDK call of every part returned,
// none answered -800 and none failed as a whole (-1) or panicked;
// otherwise it is Unprovable, for good: the region it touches stays
// registered (Unregister refuses), Drain answers false and Close is
// refused. Rows of parts no worker took end Cancelled (Cancel, Drain):
// they never reached the store.
//
// # Drain and Close
//
// Drain marks the driver draining (every later Put, Get and Register is
// refused), ends Cancelled the parts no worker took, stops the pool and
// waits within its context for the parts inside the SDK: it makes no SDK
// call, and with a context already ended and a part held inside the SDK
// it returns false at once. Close, only after a Drain that returned true
// with every region unregistered, destroys the client the driver owns.
//
// # Decisions
//
//   - The driver owns the client New is given; Close destroys it. [Open]
//     reads a store config and opens both.
//   - "A key this driver is putting now" is a key a put row of this
//     driver has held since its admission and until the row ended: a
//     second put of it admitted meanwhile ends NotReady. Rows within one
//     batch never repeat a name.
//   - The keys a put is writing are kept as their 64-bit hashes (a
//     per-driver random seed): no copy of the key, a cheap map. Two keys
//     of one hash would make the second's put NotReady while the first
//     is written: an undelivered row, never a wrong one, with odds of
//     about n²/2⁶⁵ for n keys in flight (below 10⁻⁹ at 100 000). Keys
//     left open are copied whole: the ledger keeps them for good and
//     must never confuse two.
//   - The exists-check confirming a put, or deciding a key left open,
//     touches no slot; if it fails as a whole the rows it was to decide
//     Fault, and a -1 or a panic there makes the access unprovable all
//     the same (the rule is about the part: the binding's state is then
//     unknown).
//   - An argument error or a destroyed client (mooncakesdk's
//     ErrInvalidArgument, ErrClosed) reached nothing: its part's rows
//     Fault with the access provable.
//   - Admission checks the batch under the driver's lock, builds the keys
//     outside it, and checks again only if the registered regions changed
//     meanwhile; Unregister takes a region out of the live list before
//     it asks the store, and puts it back if the store refuses.
//   - Faulted rows are logged once per part (count, first key, the
//     store's answer); an SDK call failing as a whole is logged with
//     whether the access became unprovable.
//   - A Register whose SDK call panicked may have registered the buffer:
//     it answers a [contract.RegistrationError] with a handle to revoke.
//
// # Equivalent mutants
//
// go run mage.go mutate (mutation testing) counts these mutants as
// equivalent, not lived: nothing observable differs, so no test can
// kill them.
//
//   - `driver.go` in `rebuildLiveLocked`: `d.liveGen++` (INCREMENT_DECREMENT):
//     the generation is only compared for equality (admission checks
//     again when it changed meanwhile); counted down it changes at every
//     rebuild just the same.
//   - `part.go` in `resize`: `cap(s) < n` (CONDITIONALS_BOUNDARY): with <=
//     an array with room for exactly n is made anew; every caller writes
//     each element before reading it (or clears it), so old contents are
//     never relied on.
package mooncakedrv
