// Package conformance is the driver conformance suite: [Run] checks that
// a [contract.Driver] keeps the driver rules of package contract, the way
// [testing/fstest.TestFS] checks a file system. A driver's own test calls
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, conformance.Harness{New: newSubject})
//	}
//
// and every check runs as a subtest named after it, so
// `go test -run 'TestConformance/extents'` runs one (Harness.Only does
// the same from code). [Checks] lists them, with what each needs.
//
// # What it promises
//
//   - Every finding is reported, not only the first: each check goes on
//     as far as the driver's state allows, and every check runs whatever
//     the others found. Each finding names the operation (direction, row
//     count, row names), the row or the slot, and the rule it breaks.
//   - Each check runs on a fresh driver from Harness.New, and skips, with
//     the reason, when the driver's Capabilities or the harness's hooks
//     cannot stage it. A skip is never a pass in disguise: a check that
//     could not prove its point skips. Run ends by logging a summary: the
//     checks run, passed, failed and skipped, each skip with its kind
//     (hook missing, capability not declared, harness setting, driver
//     state) and reason, and every part of a check left out and why (a
//     case over MaxRowsPerOp, say), so that a harness with few hooks
//     shows what it did not give the suite. What each check needs is
//     listed below.
//   - A broken driver fails rather than hangs: every wait (an operation
//     settling, a row reaching a gate, Drain), every driver call and
//     every call of a scenario hook is bounded by Harness.Wait. A call
//     that does not return in time marks the driver hung: nothing more is
//     asked of it, and all memory lent to it is kept. While it waits for
//     an operation, the suite polls it in response to its onChange, plus
//     one last poll when the wait runs out, which is how a silent driver
//     is told from a slow one. Once a driver was seen changing an
//     operation without calling onChange, every later wait of the run
//     polls (every 50 µs at first, every 5 ms at most) and every check
//     that needs a callback fails at once, so a silent driver costs the
//     run one Wait. It never sleeps and then asserts.
//   - Every onChange call, once the operation is known (Put or Get
//     returned it), polls the operation from inside the callback, on a
//     goroutine of its own, and waits for that Poll within half of Wait:
//     a driver that calls onChange holding a lock Poll needs (a Drain
//     calling back for the rows it cancelled, say) is caught wherever it
//     does, not only when a poll happens to collide.
//   - Every snapshot, from the check's goroutine or from inside onChange,
//     is held to rule 3: one status per row, no unknown status or access,
//     a final status never changes, access leaves Open only after every
//     row is final and never changes again. Every Poll of a check is
//     serialised with what the suite does with its snapshot, so
//     snapshots are held to the rules in the order Poll returned them.
//     And the check's own polls to what Poll does with dst: the suite
//     polls each operation into two buffers of its own, in turn, each
//     with room for every row; the statuses must be appended to the dst
//     given, and the snapshot the poll before returned must still read
//     the same (the driver keeps no dst and hands out no slice of its
//     own).
//   - Every Drain that answers true is held to rules 2 and 5, whatever
//     the harness's hooks: for each operation admitted, an onChange call
//     has returned and none is still running, and a Poll then shows its
//     access Ended (not Open, not Unprovable). Every check's teardown,
//     and the end of the run once more, report onChange calls that came
//     after a Drain answered true.
//   - Access end is watched, not sampled. The first snapshot that shows
//     an operation's access Ended seals its memory before any other Poll
//     of the check runs: the suite writes a fresh pattern over each span
//     of every row, as a lender reusing the slot would, and keeps what
//     the span held as its view of it (so the checks still read what the
//     driver left). A sealed span must hold its pattern until the suite
//     takes it back for another operation: the suite looks after every
//     later driver call, at teardown, and at the end of the run, right
//     before unmapping it. For a put, the suite also reads back with the
//     Object hook, at teardown, each row's object: the pattern found under
//     the key means the driver read the memory again and stored it, and a
//     Ready row's object must be the one it found right after the access
//     ended. A change names the slot, the operation and the check, and
//     keeps the memory mapped for good.
//   - The suite never frees memory an admitted operation may still touch.
//     It lends region memory it maps itself (anonymous mmap, outside the
//     Go heap, with a guard page on either side and a canary pattern over
//     all of it, so that a stray write shows and lands in memory the suite
//     owns). At the end of a check it drains the driver, unregisters what
//     it registered and closes the driver, each only when the step before
//     allowed it, and marks a region free only when every registration of
//     it was revoked (Unregister returned nil) and every operation with a
//     span in it was seen with access Ended. Free memory is unmapped at the
//     end of the run, after the last look at it. Otherwise the memory stays
//     mapped for the life of the process, and the check logs which region
//     was kept and why: an Unprovable operation, a call that panicked or
//     returned no operation, a refusal that does not wrap
//     ErrDriverRejected (so certifies nothing), a registration that could
//     not be revoked, a driver that stopped answering, memory touched
//     after an access ended.
//   - A region is proven live by moving a row through it (a put of the
//     slot, or for a get-only driver a get of a seeded object). When such
//     a probe row's access ends Unprovable the check ends as a skip, and
//     the region's memory is kept; so does a check whose staging put or
//     reading-back get ends Unprovable.
//
// # What it refuses
//
// The suite lends host memory only. A driver that declares DeviceMemory
// gets Device regions (host memory so labelled) only when its harness
// says it moves such memory (Harness.LendDevice); Run refuses LendDevice
// for a driver that does not declare DeviceMemory. It maps memory with
// syscall.Mmap, so it builds on Unix systems only. It stores keys under
// Harness.KeyPrefix and never deletes them. A KeyPrefix holding a NUL
// byte fails Run: no key may hold one.
//
// # The harness
//
// [Harness] is what a driver's test hands to Run; only New is required.
//
//   - New: called by Run once per check (once per direction for the
//     checks that run per direction), from the check's goroutine, before
//     the check does anything else. It returns a fresh [Subject]: the
//     driver, with nothing registered, and the scenario hooks the harness
//     can stage on it. The suite drains and closes the driver when it can;
//     the harness need not.
//   - SlotBytes: read by Run once; the slot size of every region the suite
//     lends (default 4096). Objects are at most two slots.
//   - Wait: read by every wait and driver call of the suite (default 10 s).
//   - Only: read by Run once; the checks to run, by name.
//   - KeyPrefix: read by every check when it names a key (default a fresh
//     random prefix per Run). A row's name is the check's name (with
//     "/put" or "/get" for a direction's sub-check) + "/" + what the
//     check picks; the rows that prove a region live are "probe-1",
//     "probe-2", … in the order the check moves them. Its key starts
//     with KeyPrefix (see Names and keys).
//   - Thorough: read by Run; also runs what only waiting out Wait can
//     catch. The run ends by waiting until Wait has passed since the
//     last access end it saw and the last Drain that answered true, then
//     looks again for memory touched after an access ended and for late
//     callbacks; second-put waits, within Wait, for the second put while
//     the first is held. A thorough run takes about one Wait longer, more
//     for a driver with a single worker.
//   - LendDevice: read by every check that lends memory; every region is
//     labelled Device (see What it refuses).
//
// The hooks of a [Subject] are called one at a time, each bounded by
// Wait, in the middle of a check, and each applies from that moment to
// the end of the check (the driver is never reused). A key a hook takes
// or finds is the store key of a row, as the batch's key maker builds it
// ([contract.RowBatch.Key]):
//
//   - Seed(key, data): before a get, to stage an object the driver did
//     not put (get-only drivers; objects of the wrong size).
//   - Object(key): after a put, to read what the store holds (put-only
//     drivers; a refused or cancelled put stored nothing; a put's object
//     after its access ended).
//   - Writing(key): before a put or get of key, to stage another writer
//     still writing it; the check calls finish, or teardown calls
//     finish(nil).
//   - Full(): before a put that the store must decline.
//   - Hold(dir): before submitting rows that must block inside the store;
//     the check waits with Gate.Held and calls Gate.Release (teardown
//     releases every gate the check did not; drain-waits-for-rows
//     releases it from a goroutine of its own while Drain runs).
//   - Crash(dir): before submitting rows whose store calls must crash.
//   - FailReads(keys...), UnprovableGets(keys...): before a get of those
//     keys.
//   - Pause(): before submitting rows that must stay unstarted; the check
//     or teardown calls resume.
//
// # Names and keys
//
// Every batch the suite builds carries a key maker of the suite's own,
// neither keys.Stem nor hex, so that no driver can lean on a key grammar:
// the key of a name is KeyPrefix, then the name with every byte outside
// [A-Za-z0-9._/-] written as '%' and two uppercase hex digits, then '~'
// repeated until the name's part is three bytes a name byte long ("a b"
// makes KeyPrefix+"a%20b~~~~"). The fill is what keeps KeyLen exact (an
// escape is three bytes; KeyLen(n) is len(KeyPrefix)+3n whatever the
// name holds), and it makes a key never a plain KeyPrefix+name. The
// empty name and names over 256 bytes have no key (KeyLen 0). The key
// maker is deterministic, injective ('~' never stands for a name byte),
// safe for concurrent use, allocates only to grow dst, and emits no NUL.
// Findings name rows by name, short of the check's part; they show keys
// where the key is the point (an object looked for under it).
//
// # The checks
//
// Admission: rule 1, and what Capabilities declare.
//
//   - capabilities-stable: Capabilities returns the same value every time,
//     and declares at least one direction.
//   - bad-region: Register refuses bad geometry with ErrDriverRejected and
//     registers nothing.
//   - device-memory: without DeviceMemory, a Device region is refused with
//     ErrDriverRejected and nothing is registered; with it, Device and
//     Host regions register and move rows.
//   - admission: a batch with no rows, no key maker (Keys nil), an empty
//     name, a name the key maker has no key for, a row without a span, a
//     span of length 0 or less, or (without MultiSpan) a row of two spans
//     is refused with ErrDriverRejected and records nothing: no callback,
//     no object, no byte written, Drain true, the region idle.
//   - extents: a span outside every registration (another mapping,
//     straddling either end of a region) is refused with ErrDriverRejected
//     and nothing is recorded.
//   - duplicate-key: a batch carrying a name (so a key) twice, short or
//     long, is refused with ErrDriverRejected and nothing is recorded.
//   - nil-operation: an admitted Put or Get returns a non-nil operation.
//   - never-panics: Put and Get return, never panic, on good and bad
//     batches alike.
//   - hints: without Hints a get with a hint is refused and records
//     nothing; with Hints it is served.
//   - result-count: Poll appends exactly one status per batch row to the
//     dst it is given, in every snapshot, and never changes a snapshot it
//     returned.
//
// Moving bytes and verdicts: rule 3 and the RowStatus meanings.
//
//   - put-round-trip: a put stores each row's bytes exactly (read back by
//     a get, or the Object hook) and writes no memory.
//   - get-round-trip: a get lands each object byte for byte in its span
//     and writes no byte outside it.
//   - exact-key: a put stores each row under exactly the key the batch's
//     key maker builds (the Object hook finds it there), and a get reads
//     the object seeded under that key, names the key maker escapes
//     included.
//   - multi-span: with MultiSpan, a row of two spans moves as one object,
//     its spans in order.
//   - absent-key: a get of a key never stored is Miss with its slot
//     untouched (Miss or Fault without AbsentIsMiss), never Ready.
//   - writer-holds-key: a key another writer is still writing is NotReady
//     in each direction, a get's slot untouched and the writer's object
//     intact.
//   - short-object: a get of an object shorter than its row is a Fault,
//     nothing written outside the slot.
//   - long-object: a get of an object longer than its row is refused as a
//     Fault, nothing written at all.
//   - full-store: a put the store refuses on its own terms is Declined and
//     stores nothing.
//   - failed-read: a read the store fails is a Fault and access still
//     leaves Open, nothing written outside the slot.
//   - crash: a crash inside the store call ends the rows Fault (or
//     Cancelled, never run) and access leaves Open.
//   - verdict-order: rows of mixed verdicts (stored and absent keys for a
//     get, fresh keys and keys another writer holds for a put) end each
//     with its own verdict, in batch order.
//   - second-put: a put of a key another put of this driver is still
//     writing (held inside the store) ends NotReady, and the key keeps one
//     whole object.
//
// Callbacks and the operation's life: rules 2 and 3.
//
//   - on-change: onChange follows the changes of results and access, so
//     polling only when it is called sees the operation settle.
//   - poll-in-callback: Poll called from inside onChange returns: no
//     callback runs under a lock Poll needs.
//   - drain-waits-for-callback: Drain does not return true while the
//     onChange for the last change is still running, and does once it
//     returned.
//   - no-callback-after-drain: no onChange follows a Drain that returned
//     true.
//   - access-after-results: access leaves Open only after every row is
//     final.
//   - final-results-stay: final statuses and the access end never change,
//     across later polls and a Drain.
//   - unprovable-terminal: Unprovable access is terminal, makes Drain
//     answer false (its context already ended or with time left), and
//     keeps the region registered.
//
// Work, cancel, drain, regions, close: rules 4, 5 and 6.
//
//   - held-row: a row held inside the store delays neither another call's
//     admission nor Drain, which answers false while it is open.
//   - drain-waits-for-rows: Drain with time left waits within its context
//     for a row running in the store, and answers true once it ends.
//   - drain-deadline: Drain whose context ends while a row runs in the
//     store answers false.
//   - drain-busy-callback: while a worker is inside onChange, Drain
//     answers false, its context already ended or ending while it waits,
//     and true once the callback returned.
//   - cancel: with Cancel, rows no worker took end Cancelled, their memory
//     untouched.
//   - cancel-running: Cancel of a row running in the store leaves the row
//     to run on (or end Cancelled untouched), and its memory is not
//     touched once access reads Ended.
//   - drain-cancels-queued: Drain cancels rows no worker took, answering
//     true without waiting for them and only after the callback for that
//     change returned.
//   - unregister-busy: Unregister of a region an open operation covers is
//     refused with ErrDriverRejected and the region stays live.
//   - unregister-queued: Unregister of a region whose operation no worker
//     took yet is refused with ErrDriverRejected and the region stays
//     live.
//   - unregister-revokes: Unregister of an idle region succeeds, and later
//     rows in it are refused.
//   - rejects-after-drain: after a Drain, Put and Get are refused with
//     ErrDriverRejected and record nothing.
//   - rejects-after-false-drain: after a Drain that answered false, Put
//     and Get are refused with ErrDriverRejected and record nothing.
//   - close: Close is refused before a true Drain or with a region
//     registered, keeps everything, and succeeds after both.
//   - close-after-false-drain: Close after only Drains that answered false
//     is refused even with every region unregistered, and succeeds after a
//     Drain that returned true.
//   - together-validates: RegisterRegions with one bad region refuses the
//     whole batch (ErrDriverRejected and ErrInvalidRegion) and registers
//     none of it.
//   - together-revokes: UnregisterRegions revokes every region of the
//     batch.
//   - together-busy: UnregisterRegions with one region busy is refused and
//     keeps the whole batch registered.
//
// # What each check needs
//
// The hooks of the [Subject] and the Capabilities each check needs to run
// at all; without them it skips, saying which (Check.Needs says the
// same). "A put" is a driver that declares Put; "nothing" is a check
// every driver runs. Every check that ends an operation also watches its
// memory after the access ended (see What it promises); reading a put's
// object back then needs the Object hook, and the run's summary says so
// when the harness has none.
//
//   - capabilities-stable: a put, or the Seed hook.
//   - bad-region: a put, or the Seed hook.
//   - device-memory: a put, or the Seed hook; with DeviceMemory declared,
//     Harness.LendDevice.
//   - admission: nothing.
//   - extents: nothing.
//   - duplicate-key: nothing.
//   - nil-operation: nothing.
//   - never-panics: nothing.
//   - hints: Get; with Hints, a put or the Seed hook.
//   - result-count: nothing.
//   - put-round-trip: Put; Get or the Object hook.
//   - get-round-trip: Get; a put or the Seed hook.
//   - exact-key: per direction: the Object hook (put), the Seed hook
//     (get).
//   - multi-span: MultiSpan; for a put, Get or the Object hook.
//   - absent-key: Get.
//   - writer-holds-key: the Writing hook.
//   - short-object: Get; a put or the Seed hook.
//   - long-object: Get; a put or the Seed hook.
//   - full-store: Put and the Full hook.
//   - failed-read: Get and the FailReads hook; a put or the Seed hook.
//   - crash: the Crash hook.
//   - verdict-order: MaxRowsPerOp 0 or 2 and more; a get needs a put or
//     the Seed hook, a put the Writing hook.
//   - second-put: Put and the Hold hook.
//   - on-change: nothing.
//   - poll-in-callback: the Pause hook, else the Hold hook.
//   - drain-waits-for-callback: the Pause hook, else the Hold hook.
//   - no-callback-after-drain: nothing.
//   - access-after-results: the Hold hook, else the Pause hook.
//   - final-results-stay: nothing.
//   - unprovable-terminal: Get and the UnprovableGets hook.
//   - held-row: the Hold hook.
//   - drain-waits-for-rows: the Hold hook.
//   - drain-deadline: the Hold hook.
//   - drain-busy-callback: nothing (a worker of the driver's own that
//     calls onChange).
//   - cancel: Cancel and the Pause hook.
//   - cancel-running: the Hold hook.
//   - drain-cancels-queued: the Pause hook.
//   - unregister-busy: the Hold hook.
//   - unregister-queued: the Pause hook.
//   - unregister-revokes: a put, or the Seed hook.
//   - rejects-after-drain: a put, or the Seed hook.
//   - rejects-after-false-drain: nothing (a worker of the driver's own
//     that calls onChange).
//   - close: a put, or the Seed hook.
//   - close-after-false-drain: nothing (a worker of the driver's own that
//     calls onChange).
//   - together-validates: RegionsTogether.
//   - together-revokes: RegionsTogether; a put, or the Seed hook.
//   - together-busy: RegionsTogether and the Hold hook.
//
// # Decisions
//
// Where the contract is silent, the suite decided:
//
//   - The suite's key maker is its own, not hex, with a fill that makes
//     KeyLen exact (see Names and keys). exact-key proves the key by the
//     harness's hooks alone, never by the driver's own round trip, which
//     a driver with a key grammar of its own passes: its put half needs
//     the Object hook and its get half the Seed hook, and each skips
//     without. Its names hold a space, '%', '~', a NUL and bytes that are
//     no UTF-8, since a name is bytes. Every other check that stages or
//     reads back through a hook holds the driver to the same key.
//   - "Poll appends to dst[:0]" is checked as: when dst had room for
//     every row, the statuses returned start at dst's first element. A
//     driver that keeps dst, or returns a slice of its own that it
//     changes later, shows as a snapshot that changed after it was
//     returned; the suite alternates two buffers so that the snapshot
//     before is never the one it polls into. A change made from another
//     goroutine is caught only if it lands between two polls (and is a
//     data race the race detector reports).
//   - duplicate-key sends a repeated name in a batch of ten rows too,
//     since rowbatch checks batches over eight rows with a table instead
//     of a scan.
//   - "A held get delays neither another get nor Drain" is checked as:
//     while a row is held inside the store, another Put or Get in the
//     same direction is still admitted (its call returns within Wait),
//     and Drain with an expired context answers false at once. It does not require the other row to complete while the
//     first is held, since a single-worker FIFO driver is valid; the
//     other row may end Cancelled when that Drain took it off the queue.
//     Every check lets a held row go before it waits for anything else.
//   - Answers that must be false (Drain while a row is held, a callback
//     is blocked, or an operation is Unprovable) are asked with an
//     already expired context, so the check needs no clock; and again
//     with a context that ends while Drain waits (drain-deadline,
//     drain-busy-callback): it has Wait left and is cancelled the moment
//     Drain first asks it for Done, Err or Deadline. Each of those
//     answers from before the cancel (Err says nil), so a Drain that
//     looks at its context first and waits after sees it end while it
//     waits. Unprovable is asked with Wait left as well: a correct driver
//     answers false at once (nothing can change), and one that waits out
//     its context before answering false makes unprovable-terminal take
//     Wait.
//   - Drain waiting within its context (drain-waits-for-rows) is checked
//     without a clock too: Drain gets a context with Wait left, and the
//     held row is let go the moment Drain first asks the context for
//     Done, Err or Deadline, which waiting within it (or within a context
//     derived from it) does. A Drain that answers false then, or answers
//     without looking at the context while a row is held, does not wait.
//   - Drain waiting for the last onChange is checked by blocking, inside
//     onChange, the first callback that sees access ended: Drain asked
//     then must not answer true, and must once the callback is let go.
//     The callback calls Poll, which the contract allows; every callback
//     does (see What it promises). This catches for certain a Drain that
//     ignores callbacks; a driver that hands each callback to a goroutine
//     of its own and counts its worker finished at once is caught only
//     when Drain is asked after that worker counted itself finished (in
//     practice almost always, by chance all the same), or answers before
//     the freed callback returned. Telling it apart for certain needs an
//     event a correct driver never gives, so every correct driver would
//     wait out Wait; the suite does not make it. Every other true Drain
//     is held to the same rule as well (see What it promises).
//   - The two checks that act on the operation inside onChange need
//     callbacks that come after Put or Get returned (the callback must
//     know the operation): they submit under Pause, else under Hold, and
//     skip without either hook, since a driver may finish a small batch
//     before Put returns. access-after-results skips without either hook
//     as well: it cannot be sure to poll while a row is pending.
//   - Without AbsentIsMiss a get of an absent key may be Miss (slot
//     untouched) or Fault; an Unprovable access then ends the check as a
//     skip, keeping the memory.
//   - A crash may end rows no worker took Cancelled instead of Fault, but
//     at least one row must be Fault, none Ready.
//   - Register of bad geometry or of a Device region without DeviceMemory
//     must be refused with ErrDriverRejected (nothing registered), not a
//     *RegistrationError.
//   - A batch over MaxRowsPerOp is not sent: the binding never sends one,
//     and the contract does not say the driver refuses it. Checks shrink
//     their batches to the cap; a check left with no batch skips. A case
//     of a check left out for the cap (duplicate-key's three-row repeated
//     name under a cap of two) is logged and listed in the summary.
//   - Running work a Drain must wait for, staged with no hook: a worker
//     kept inside onChange. The suite owns the callback, so it can hold
//     the first call the driver makes on a goroutine of its own until the
//     check lets it go; a worker calls onChange before it counts itself
//     finished, so Drain must answer false meanwhile. A call the driver
//     makes synchronously inside a call of the suite's (Put, Drain, a
//     hook) is never held, or the suite's own call would wait for it: the
//     callback looks for the suite's call on its own goroutine's stack.
//     drain-busy-callback, rejects-after-false-drain and
//     close-after-false-drain stage their false Drain this way, so they
//     need no hook. A row running inside the store is another matter: it
//     can be staged only with Hold, so a Drain that lies about such a row
//     alone is caught only by checks that have it (held-row,
//     drain-deadline, drain-waits-for-rows); every true Drain is still
//     held to a Poll of every operation.
//   - The suite seals memory with a fresh pattern, not a copy of what
//     the span held: a driver that writes the same object again would
//     leave a copy unchanged. The pattern differs for every span of the
//     run. A sealed span the suite hands to another operation (a second
//     get into the same slot) is looked at one last time and given up
//     first; staging puts use slots of their own, so their memory stays
//     watched. A put's object is read back only with the Object hook
//     (reading it through the driver's own get would change what the
//     check leaves), at teardown before Close; the object a Ready row
//     must keep is read right before the check's next driver call after
//     the access end, and the pattern under the key is a finding
//     whenever it is read.
//   - Poll from inside onChange waits within half of Wait, so that a
//     driver call the callback came from (Drain, say) still returns within
//     Wait once the callback gave up; a Poll that does not return is a
//     finding, not a hang, and the callback returns. A Poll inside a
//     callback after the check ended, or once Close was called, is not
//     made.
//   - cancel-running accepts either answer to a Cancel of a row running
//     in the store: the row runs on and ends with its verdict, or ends
//     Cancelled having touched nothing (memdrv's CompleteAfterCancel(false)
//     does that). What it holds the driver to is the memory: the suite
//     lets the row go and drains, which waits for it, so a transfer still
//     running after the driver said Ended touches sealed memory.
//   - second-put holds the first put inside the store and puts the same
//     key again. Whether the second can end while the first is held
//     depends on a free worker, which the suite cannot see: a normal run
//     looks once, at once (a note says when it could not judge); a
//     thorough run waits for it within Wait, which a driver with a single
//     worker pays. Both puts carry the same bytes, so the object is right
//     whichever stored it.
//   - verdict-order mixes verdicts in each order and its reverse ("s s a"
//     and "a s s" for a get), so that a driver answering rows in any order
//     but batch order (reversed, sorted by status) gets one wrong.
//   - The end of the run is where what comes late is caught: memory is
//     unmapped only there, after a last look, and late callbacks are
//     counted once more. A normal run looks at once; a thorough run waits
//     first (see Harness.Thorough). Findings made there are reported on
//     the test Run was given, each prefixed with its check's name and
//     "after the run".
//
// # Its own tests
//
// The package's tests import github.com/kvshare/kvshare/memdrv and
// memdrv/broken (a test-only requirement; go.mod replaces it with
// ../memdrv). The in-memory driver is the suite's reference: Run must pass
// wholly against it, plain, single-worker FIFO, put-only, get-only,
// registering regions together, with hints, multi-span rows, a row cap
// and no Cancel, declaring DeviceMemory (lent Device regions), without
// AbsentIsMiss, and thorough. The self-test (TestSelfTest) holds every
// catch to a two-way test: the check paired with a deviant driver must
// fail, naming the violation, and the same check must pass, not skip,
// against the conforming in-memory driver, so that the failure is the
// deviation's doing. Its deviant drivers are every broken driver of
// memdrv/broken (TestSelfTestEveryBrokenRulePaired requires a pairing for
// each), and deviations built in the tests over memdrv: a Drain that
// ignores a running callback, never waits, or answers before the
// callbacks of the rows it cancelled; callbacks under Poll's lock;
// admission that waits for a held row; a driver that refuses nothing;
// keys of a driver's own (hex of the name, the name alone) instead of the
// batch's key maker; a Poll that keeps dst, or returns statuses in a
// slice of its own; verdicts bent from one status to another; objects
// stored with other bytes; Capabilities that change; a Close that never
// refuses; batches of regions validated, revoked or kept busy wrongly;
// callbacks and writes that come well after their trigger. Every catch
// runs thorough, all side by side, so the self-test takes about one Wait
// plus the work; a flaky catch is a miss, so every catch must hold on
// every run. TestSelfTestWholeSuite runs the whole suite against each
// broken driver (the paired check fails, nothing hangs), and
// TestSelfTestSilentDriverFailsFast shows a silent driver costs one wait. Further
// tests hold teardown to its promise: memory is kept exactly when an
// operation's access was not proven ended, a registration was not revoked
// or a call or hook hung, and a registration that failed but may be live
// is revoked before its memory goes.
package conformance
