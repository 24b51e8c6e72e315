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
// the same from code). [Checks] lists them.
//
// # What it promises
//
//   - Every finding is reported, not only the first: each check goes on
//     as far as the driver's state allows, and every check runs whatever
//     the others found. Each finding names the operation (direction, row
//     count, row names), the row, and the rule it breaks.
//   - Each check runs on a fresh driver from Harness.New, and skips, with
//     the reason, when the driver's Capabilities or the harness's hooks
//     cannot stage it. A skip is never a pass in disguise: a check that
//     could not prove its point skips.
//   - A broken driver fails rather than hangs: every wait (an operation
//     settling, a row reaching a gate, Drain), every driver call and
//     every call of a scenario hook is bounded by Harness.Wait. A call
//     that does not return in time marks the driver hung: nothing more is
//     asked of it, and all memory lent to it is kept. While it waits for an operation, the suite polls it only
//     in response to its onChange, plus one last poll when the wait runs
//     out, which is how a silent driver is told from a slow one. It polls
//     at other times only to hold more snapshots to the rules (rows it
//     staged to be pending, an operation already settled). It never
//     sleeps and then asserts.
//   - Every snapshot any check polls is held to rule 3: one status per
//     row, no unknown status or access, a final status never changes,
//     access leaves Open only after every row is final and never changes
//     again. And to what Poll does with dst: the suite polls each
//     operation into two buffers of its own, in turn, each with room for
//     every row; the statuses must be appended to the dst given, and the
//     snapshot the poll before returned must still read the same (the
//     driver keeps no dst and hands out no slice of its own). Every
//     Drain that answers true is held to rule 2: for each operation
//     admitted, an onChange call has returned and none is still running.
//     Every check's teardown reports onChange calls that came after a
//     Drain answered true.
//   - The suite never frees memory an admitted operation may still touch.
//     It lends region memory it maps itself (anonymous mmap, outside the
//     Go heap, with a guard page on either side and a canary pattern over
//     all of it, so that a stray write shows and lands in memory the suite
//     owns). At the end of a check it drains the driver, unregisters what
//     it registered and closes the driver, each only when the step before
//     allowed it, and unmaps a region only when every registration of it
//     was revoked (Unregister returned nil) and every operation with a
//     span in it was seen with access Ended. Otherwise the memory stays
//     mapped for the life of the process, and the check logs which region
//     was kept and why: an Unprovable operation, a call that panicked or
//     returned no operation, a refusal that does not wrap
//     ErrDriverRejected (so certifies nothing), a registration that could
//     not be revoked, a driver that stopped answering.
//   - A region is proven live by moving a row through it (a put of the
//     slot, or for a get-only driver a get of a seeded object). When such
//     a probe row's access ends Unprovable the check ends as a skip, and
//     the region's memory is kept; so does a check whose staging put or
//     reading-back get ends Unprovable.
//
// # What it refuses
//
// The suite lends host memory only: a driver that declares DeviceMemory
// is not tested with device memory (device-memory skips). It maps memory
// with syscall.Mmap, so it builds on Unix systems only. It stores keys
// under Harness.KeyPrefix and never deletes them. A KeyPrefix holding a
// NUL byte fails Run: no key may hold one.
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
//     drivers; a refused or cancelled put stored nothing).
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
//   - capabilities-stable: Capabilities returns the same value every
//     time, and declares at least one direction.
//   - bad-region: Register refuses bad geometry with ErrDriverRejected
//     and registers nothing.
//   - device-memory: without DeviceMemory, a Device region is refused
//     with ErrDriverRejected and nothing is registered.
//   - admission: a batch with no rows, no key maker (Keys nil), an
//     empty name, a name the key maker has no key for, a row without a
//     span, a span of length 0 or less, or (without MultiSpan) a row of
//     two spans is refused with ErrDriverRejected and records nothing:
//     no callback, no object, no byte written, Drain true, the region
//     idle.
//   - extents: a span outside every registration (another mapping,
//     straddling either end of a region) is refused with
//     ErrDriverRejected and nothing is recorded.
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
//   - put-round-trip: a put stores each row's bytes exactly (read back
//     by a get, or the Object hook) and writes no memory.
//   - get-round-trip: a get lands each object byte for byte in its span
//     and writes no byte outside it.
//   - exact-key: a put stores each row under exactly the key the batch's
//     key maker builds (the Object hook finds it there), and a get reads
//     the object seeded under that key, names the key maker escapes
//     included.
//   - multi-span: with MultiSpan, a row of two spans moves as one
//     object, its spans in order.
//   - absent-key: a get of a key never stored is Miss with its slot
//     untouched (Miss or Fault without AbsentIsMiss), never Ready.
//   - writer-holds-key: a key another writer is still writing is
//     NotReady in each direction, a get's slot untouched and the
//     writer's object intact.
//   - short-object: a get of an object shorter than its row is a Fault,
//     nothing written outside the slot.
//   - long-object: a get of an object longer than its row is refused as
//     a Fault, nothing written at all.
//   - full-store: a put the store refuses on its own terms is Declined
//     and stores nothing.
//   - failed-read: a read the store fails is a Fault and access still
//     leaves Open, nothing written outside the slot.
//   - crash: a crash inside the store call ends the rows Fault (or
//     Cancelled, never run) and access leaves Open.
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
//   - final-results-stay: final statuses and the access end never
//     change, across later polls and a Drain.
//   - unprovable-terminal: Unprovable access is terminal, makes Drain
//     answer false, and keeps the region registered.
//
// Work, cancel, drain, regions, close: rules 4, 5 and 6.
//
//   - held-row: a row held inside the store delays neither another
//     call's admission nor Drain, which answers false while it is open.
//   - drain-waits-for-rows: Drain with time left waits within its
//     context for a row running in the store, and answers true once it
//     ends.
//   - cancel: with Cancel, rows no worker took end Cancelled, their
//     memory untouched.
//   - drain-cancels-queued: Drain cancels rows no worker took, answering
//     true without waiting for them and only after the callback for that
//     change returned.
//   - unregister-busy: Unregister of a region an open operation covers
//     is refused with ErrDriverRejected and the region stays live.
//   - unregister-revokes: Unregister of an idle region succeeds, and
//     later rows in it are refused.
//   - rejects-after-drain: after a Drain, Put and Get are refused with
//     ErrDriverRejected and record nothing.
//   - close: Close is refused before a true Drain or with a region
//     registered, keeps everything, and succeeds after both.
//   - together-validates: RegisterRegions with one bad region refuses
//     the whole batch (ErrDriverRejected and ErrInvalidRegion) and
//     registers none of it.
//   - together-revokes: UnregisterRegions revokes every region of the
//     batch.
//   - together-busy: UnregisterRegions with one region busy is refused
//     and keeps the whole batch registered.
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
//     already expired context, so the check needs no clock.
//   - Drain waiting within its context (drain-waits-for-rows) is checked
//     without a clock too: Drain gets a context with Wait left, and the
//     held row is let go the moment Drain first asks the context for
//     Done, Err or Deadline, which waiting within it (or within a context
//     derived from it) does. A Drain that answers false then, or answers
//     without looking at the context while a row is held, does not wait.
//   - Drain waiting for the last onChange is checked by blocking, inside
//     onChange, the first callback that sees access ended: Drain asked
//     then must not answer true, and must once the callback is let go.
//     The callback calls Poll, which the contract allows; poll-in-callback
//     checks that on its own. This catches for certain a Drain that
//     ignores callbacks; a driver that hands each callback to a goroutine
//     of its own and counts its worker finished at once is caught only
//     when Drain is asked after that worker counted itself finished (in
//     practice almost always, by chance all the same), or answers before
//     the freed callback returned. Telling it apart for certain needs an
//     event a correct driver never gives, so every correct driver would
//     wait out Wait; the suite does not make it. Every other true Drain
//     is held to the same rule as well (see What it promises).
//   - The two checks that act inside onChange need callbacks that come
//     after Put or Get returned (the callback must know the operation):
//     they submit under Pause, else under Hold, and skip without either
//     hook, since a driver may finish a small batch before Put returns.
//     access-after-results skips without either hook as well: it cannot
//     be sure to poll while a row is pending.
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
//     their batches to the cap; a check left with no batch skips.
//
// # Its own tests
//
// The package's tests import github.com/kvshare/kvshare/memdrv and
// memdrv/broken (a test-only requirement; go.mod replaces it with
// ../memdrv). The in-memory driver is the suite's reference: Run must pass
// wholly against it, plain, single-worker FIFO, put-only, get-only,
// registering regions together, and with hints, multi-span rows, a row
// cap and no Cancel. Its broken drivers are the suite's self-test: for
// each of the sixteen, the check paired with it must fail, naming the
// violation, and the same check must pass, not skip, against the plain
// in-memory driver with the same options, so that the failure is the
// broken rule's doing. Deviations the broken package does not stage are
// built in the tests over memdrv and held to the same two-way test: a
// Drain that ignores a running callback, never waits, or answers before
// the callbacks of the rows it cancelled; callbacks under Poll's lock;
// admission that waits for a held row; a driver that refuses nothing;
// keys of a driver's own (hex of the name, the name alone) instead of
// the batch's key maker; a Poll that keeps dst, or returns statuses in
// a slice of its own;
// verdicts bent from one status to another; objects stored with other
// bytes; Capabilities that change; a Close that never refuses; batches of
// regions validated, revoked or kept busy wrongly. Further tests hold
// teardown to its promise: memory is kept exactly when an operation's
// access was not proven ended, a registration was not revoked or a call
// or hook hung, and a registration that failed but may be live is
// revoked before its memory goes.
package conformance
