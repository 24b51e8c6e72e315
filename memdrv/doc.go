// Package memdrv is kvshare's in-process store and its drivers: the
// embedded default store of the main job, and the driver every other
// module's tests run against. It also makes that store misbehave on
// purpose (scenario hooks), and package broken builds on it drivers that
// each break one driver rule.
//
// # What it owns
//
//   - [Memory]: host memory outside the Go heap (anonymous mmap), laid out
//     as one region's slots, with a byte view and Free. A lender's memory
//     in tests and in the main job. A process-wide ledger counts the
//     memdrv registrations that cover each mapping.
//   - [Store]: complete objects by key, shared by any number of drivers,
//     so two endpoints in one process see the same objects.
//   - [Driver]: a [contract.Driver] over a Store; [TogetherDriver] adds
//     [contract.RegionsTogether]. Each row is stored under the key the
//     batch's key maker builds from the row's name.
//   - The scenario hooks, methods of *Driver: a row held at the store call
//     ([Driver.Hold]), a crash in the store call ([Driver.Crash]), a read
//     that fails ([Driver.FailReads]), a get whose access can never be
//     proven ended ([Driver.UnprovableGets]), rows left unstarted
//     ([Driver.Pause]), a completion after a cancel
//     ([Driver.CompleteAfterCancel]), failed registrations
//     ([Driver.FailNextRegister], [TogetherDriver.FailNextRegistration]);
//     and on the Store, a key another writer is still writing
//     ([Store.BeginWrite]) and a full store ([Store.SetCapacity],
//     [Store.SetFull]).
//
// # What it promises
//
// Every driver rule of package contract. In particular:
//
//   - Admission is all or nothing. Put and Get check the driver's state,
//     the direction, the hint, the row cap, the batch's names, key maker
//     and extents ([rowbatch.Check] against the live registrations) and
//     that every key has the length the key maker's KeyLen promised, and
//     either fail with an error wrapping [contract.ErrDriverRejected],
//     having recorded nothing, or admit. After admission every failure is
//     a row status.
//   - Poll appends the rows' statuses to the caller's dst[:0], under the
//     driver's lock, and allocates nothing once dst has room; the
//     statuses are the caller's, and the driver never keeps dst.
//   - Verdicts. A put never overwrites: a key holding a complete object is
//     Ready (the first object stays); a key being written is NotReady; a
//     put of a key another put of this driver is writing now is NotReady
//     without reaching the store; an object beyond the store's capacity is
//     Declined. A get of an object of exactly the row's size is Ready; a
//     shorter object lands in the head of the row's spans and is a Fault;
//     a longer one is a Fault with nothing written; an absent key is Miss
//     (Fault, nothing written, with [Options.NoAbsentIsMiss]); a key being
//     written is NotReady. No byte outside a row's spans is
//     ever written, and an object is visible whole or not at all.
//   - Results, then access end, each recorded once. A row's status is
//     recorded only after the worker is done with its memory; access
//     leaves Open in the same step as the last row's status, and never
//     changes again. onChange is called after every change, on a driver
//     goroutine, outside the driver's lock, and before that goroutine
//     counts itself finished, so Drain cannot return before the last
//     callback.
//   - A region stays registered while an operation with access Open or
//     Unprovable has a span in it; Unregister then fails with
//     [ErrRegionBusy] and [contract.ErrDriverRejected].
//   - Drain and Close as the rules say.
//   - Memory is unmapped once, and never while a registration of a memdrv
//     driver covers it: [Memory.Free] then refuses with [ErrMemoryLent]
//     and the memory stays mapped. A region an unprovable operation pins
//     is therefore kept for the life of the process.
//
// # What it refuses
//
// Put, Get and registrations after Drain or Close; rows in undeclared
// directions; hints without Hints; more rows than MaxRowsPerOp; more
// than one span per row without MultiSpan; Device regions without
// DeviceMemory; handles it never issued; Close before a Drain that
// returned true or with a registration left.
//
// # Decisions
//
// Where the design was silent, memdrv decided:
//
//   - Keys are built once, at admission: every row's key, with the
//     batch's key maker ([contract.RowBatch.AppendKey]), into one buffer
//     sized for the batch (one allocation per operation, and one for the
//     key strings over it, which memdrv uses from then on: the store's
//     map, the set of keys being written, the hooks). The names are not
//     kept, though the contract lends them until access ends. A key
//     string the store keeps for a new entry is a copy, so no stored
//     object pins an operation's buffer. A key maker whose AppendKey
//     makes a key of another length than KeyLen said is refused at
//     admission (the error wraps [rowbatch.ErrBadBatch]). The scenario
//     hooks ([Driver.FailReads], [Driver.UnprovableGets], [RowEnd].Key,
//     and the [Store]'s methods) speak of keys, never names: a test
//     addresses a row's object by the key its key maker makes.
//   - Admission keeps its scratch: a [rowbatch.Checker] and the list of
//     live regions (relisted when a handle is issued or revoked; a fresh
//     list each time, so [Driver.Regions] returns a copy). Both are used
//     under the driver's lock.
//   - The batch itself (its rows' spans) is kept until access ends, as
//     the contract allows: workers read the spans, and Unregister reads
//     them to find a busy region. An operation whose access is
//     Unprovable keeps it for good, since its access never ends.
//   - [Direction] is [contract.Direction], under memdrv's names
//     ([PutDir], [GetDir]) for the hooks' callers.
//   - Workers. memdrv does not import the scheduler module: it runs its
//     own small worker set, one FIFO queue of rows taken by at most
//     [Options.Workers] goroutines (2 by default; 1 gives a strict FIFO
//     driver). Workers start when rows are queued and exit when there is
//     nothing to take, so an idle driver holds no goroutine and Close has
//     nothing to stop. Gets do not go first: an in-process copy is too
//     quick for it to matter, and FIFO keeps tests deterministic.
//   - One row at a time. A worker takes a single row, runs it, records its
//     status and calls onChange; the rows of one operation may run on
//     several workers at once, so onChange may be called concurrently.
//   - Memory. [Alloc] rounds a region up to whole pages; the bytes past
//     the last slot are region, not slot, and tests use them as canaries.
//     A Device region is host memory labelled Device: memdrv moves its
//     bytes like any other.
//   - The memory ledger. Every mapping [Alloc] made and Free has not
//     unmapped is recorded in one process-wide ledger, with the number of
//     live registrations of memdrv drivers (Register, RegisterRegions,
//     and a staged failure that left a registration live) that overlap
//     any byte of it; a revocation gives the count back. Free refuses
//     while the count is not zero. The ledger sees only memdrv's own
//     registrations: memory lent to another driver is the caller's to
//     prove. Memory that Alloc did not map (a lender's own mmap) is not
//     in the ledger and registers as before.
//   - The gate of [Driver.Hold] sits at the start of the store call,
//     after the worker took the row and before the store sees it: a held
//     put has not made its key "being written", and a held row has
//     touched no memory.
//   - Cancel ends the rows no worker took. A row held at a gate runs on
//     after a cancel and completes with its real verdict once released
//     (the contract's "rows in the store's hands run on");
//     CompleteAfterCancel(false) makes such a row end Cancelled at once
//     instead. The callback for rows Cancel ends is delivered on a
//     goroutine of the driver, never inside Cancel, so a caller may
//     cancel while holding a lock its callback takes.
//   - Drain ends Cancelled every row no worker took, whether or not the
//     driver declares Cancel (NoCancel only changes Operation.Cancel).
//     After Drain, Register and RegisterRegions are refused too.
//   - Crashes. A panic inside a store call ends the row Fault, and every
//     row of its operation no worker took yet Fault too; access ends
//     normally. It is logged with log/slog ([Options.Logger]).
//   - A nil onChange is allowed (no callback). A callback that panics is
//     logged and dropped, so its worker still counts itself finished.
//   - A put "being written by this driver" is a row a worker took and
//     whose status is not final yet.
//   - Capacity counts complete objects and puts under way. Objects staged
//     with [Store.Set] or [Store.BeginWrite] are never refused, and
//     lowering the capacity evicts nothing.
//   - A failed read ([Driver.FailReads]) leaves the first half of the
//     object in the slot when it would fit, so tests see a Fault's slot
//     as undefined. An unprovable get writes nothing.
//   - Handles. Handles grow from 1 and are never reused. Revoking a
//     handle already revoked returns nil (the store will never touch the
//     region again); a handle never issued is refused. Unregister refuses
//     a batch handle and UnregisterRegions a single one. A region is busy
//     when any span of an Open or Unprovable operation overlaps it.
//   - Hints are accepted (with Hints) and ignored, but counted
//     ([Driver.HintsSeen]), so a test can see that a hint reached the
//     driver.
//   - [Driver.OnRowEnd] lets package broken bend a verdict or a write at
//     the end of a row; a driver without it installed runs none of it.
//     [RowEnd] says why a row ended as it did where the status alone does
//     not (OwnWrite: a put of this driver was writing the key; Absent: the
//     store held no object), so a broken driver can bend exactly one case.
//   - Without AbsentIsMiss ([Options.NoAbsentIsMiss]) an absent key ends
//     Fault with nothing written and access Ended: the contract allows
//     Fault, even with access unprovable, and memdrv takes the milder
//     form so that the shape runs every check (an unprovable answer
//     would end the checks that read an absent key as skips).
//   - [Driver.Busy] and [Driver.RowsIn] expose what Drain and Unregister
//     decide from, for tests and broken drivers that must tell a row
//     queued from one running.
//
// # Equivalent mutants
//
// go run mage.go mutate (mutation testing) counts these mutants as
// equivalent, not lived: nothing observable differs, so no test can
// kill them.
//
//   - `driver.go` in `coveringLocked`: `return nil, 0, -1` (ARITHMETIC_BASE, INVERT_NEGATIVES):
//     with a nil operation the row is never read.
//   - `memory_unix.go` in `mapAnon`: `syscall.Mmap(-1, 0, n` (ARITHMETIC_BASE, INVERT_NEGATIVES):
//     Linux ignores the descriptor of an anonymous mapping (MAP_ANON), so
//     1 maps the same memory as -1.
//   - `transfer.go` in `get`: `int64(len(obj)) < size` (CONDITIONALS_BOUNDARY):
//     an object exactly as long as the row took the case before, so <=
//     adds a case no object reaches.
//   - `worker.go` in `spawnLocked`: `len(d.queue) - d.head` (ARITHMETIC_BASE, INVERT_NEGATIVES):
//     the count of queued rows only bounds how many workers start, and
//     d.running < d.workers bounds that too: counted wrong, still at most
//     Workers workers run, and one that finds no row to take exits at
//     once.
//   - `worker.go` in `spawnLocked`: `n > 0` (CONDITIONALS_BOUNDARY): the
//     same: one more worker may start, finds no row, and exits.
//   - `worker.go` in `spawnLocked`: `n--` (INCREMENT_DECREMENT): the same:
//     d.running < d.workers ends the loop.
package memdrv
