package conformance

// suite is every check, in the order Run runs them. README.md lists each
// with its Proves line, under the same group headings, and again with its
// Needs line; TestChecks holds them in step.
var suite = []check{
	// Admission: rule 1, and what Capabilities declare.
	{name: "capabilities-stable", needs: "a put, or the Seed hook", proves: "Capabilities returns the same value every time, and declares at least one direction", run: checkCapabilitiesStable},
	{name: "bad-region", needs: "a put, or the Seed hook", proves: "Register refuses bad geometry with ErrDriverRejected and registers nothing", run: checkBadRegion},
	{name: "device-memory", needs: "a put, or the Seed hook; with DeviceMemory declared, Harness.LendDevice", proves: "without DeviceMemory, a Device region is refused with ErrDriverRejected and nothing is registered; with it, Device and Host regions register and move rows", run: checkDeviceMemory},
	{name: "admission", needs: "nothing", proves: "a batch with no rows, no key maker (Keys nil), an empty name, a name the key maker has no key for, a row without a span, a span of length 0 or less, or (without MultiSpan) a row of two spans is refused with ErrDriverRejected and records nothing: no callback, no object, no byte written, Drain true, the region idle", run: checkAdmission},
	{name: "extents", needs: "nothing", proves: "a span outside every registration (another mapping, straddling either end of a region) is refused with ErrDriverRejected and nothing is recorded", run: checkExtents},
	{name: "duplicate-key", needs: "nothing", proves: "a batch carrying a name (so a key) twice, short or long, is refused with ErrDriverRejected and nothing is recorded", run: checkDuplicateKey},
	{name: "nil-operation", needs: "nothing", proves: "an admitted Put or Get returns a non-nil operation", perDir: true, run: checkNilOperation},
	{name: "never-panics", needs: "nothing", proves: "Put and Get return, never panic, on good and bad batches alike", perDir: true, run: checkNeverPanics},
	{name: "hints", needs: "Get; with Hints, a put or the Seed hook", proves: "without Hints a get with a hint is refused and records nothing; with Hints it is served", run: checkHints},
	{name: "result-count", needs: "nothing", proves: "Poll appends exactly one status per batch row to the dst it is given, in every snapshot, and never changes a snapshot it returned", perDir: true, run: checkResultCount},

	// Moving bytes and verdicts: rule 3 and the RowStatus meanings.
	{name: "put-round-trip", needs: "Put; Get or the Object hook", proves: "a put stores each row's bytes exactly (read back by a get, or the Object hook) and writes no memory", run: checkPutRoundTrip},
	{name: "get-round-trip", needs: "Get; a put or the Seed hook", proves: "a get lands each object byte for byte in its span and writes no byte outside it", run: checkGetRoundTrip},
	{name: "exact-key", needs: "per direction: the Object hook (put), the Seed hook (get)", proves: "a put stores each row under exactly the key the batch's key maker builds (the Object hook finds it there), and a get reads the object seeded under that key, names the key maker escapes included", perDir: true, run: checkExactKey},
	{name: "names-after-end", needs: "nothing", proves: "the driver reads no row's name once the operation's access ended: no key is built from one later, in Poll, Cancel or Drain (the suite writes over the names it lent when it sees access end)", run: checkNamesAfterEnd},
	{name: "multi-span", needs: "MultiSpan; for a put, Get or the Object hook", proves: "with MultiSpan, a row of two spans moves as one object, its spans in order", perDir: true, run: checkMultiSpan},
	{name: "absent-key", needs: "Get", proves: "a get of a key never stored is Miss with its slot untouched (Miss or Fault without AbsentIsMiss), never Ready", run: checkAbsentKey},
	{name: "writer-holds-key", needs: "the Writing hook", proves: "a key another writer is still writing is NotReady in each direction, a get's slot untouched and the writer's object intact", perDir: true, run: checkWriterHoldsKey},
	{name: "short-object", needs: "Get; a put or the Seed hook", proves: "a get of an object shorter than its row is a Fault, nothing written outside the slot", run: checkShortObject},
	{name: "long-object", needs: "Get; a put or the Seed hook", proves: "a get of an object longer than its row is refused as a Fault, nothing written at all", run: checkLongObject},
	{name: "full-store", needs: "Put and the Full hook", proves: "a put the store refuses on its own terms is Declined and stores nothing", run: checkFullStore},
	{name: "failed-read", needs: "Get and the FailReads hook; a put or the Seed hook", proves: "a read the store fails is a Fault and access still leaves Open, nothing written outside the slot", run: checkFailedRead},
	{name: "crash", needs: "the Crash hook", proves: "a crash inside the store call ends the rows Fault (or Cancelled, never run) and access leaves Open", perDir: true, run: checkCrash},
	{name: "verdict-order", needs: "MaxRowsPerOp 0 or 2 and more; a get needs a put or the Seed hook, a put the Writing hook", proves: "rows of mixed verdicts (stored and absent keys for a get, fresh keys and keys another writer holds for a put) end each with its own verdict, in batch order", perDir: true, run: checkVerdictOrder},
	{name: "second-put", needs: "Put and the Hold hook", proves: "a put of a key another put of this driver is still writing (held inside the store) ends NotReady, and the key keeps one whole object", run: checkSecondPut},

	// Callbacks and the operation's life: rules 2 and 3.
	{name: "on-change", needs: "nothing", proves: "onChange follows the changes of results and access, so polling only when it is called sees the operation settle", perDir: true, run: checkOnChange},
	{name: "poll-in-callback", needs: "the Pause hook, else the Hold hook", proves: "Poll called from inside onChange returns: no callback runs under a lock Poll needs", perDir: true, run: checkPollInCallback},
	{name: "drain-waits-for-callback", needs: "the Pause hook, else the Hold hook", proves: "Drain does not return true while the onChange for the last change is still running, and does once it returned", perDir: true, run: checkDrainWaitsForCallback},
	{name: "no-callback-after-drain", needs: "nothing", proves: "no onChange follows a Drain that returned true, Cancel of every operation after it included", perDir: true, run: checkNoCallbackAfterDrain},
	{name: "access-after-results", needs: "the Hold hook, else the Pause hook", proves: "access leaves Open only after every row is final", perDir: true, run: checkAccessAfterResults},
	{name: "held-sibling", needs: "the HoldKeys hook; a get, the FailReads or the Crash hook, and a put or the Seed hook; a put, the Crash hook", proves: "a row that fails (a failed read, a crash) while another row of its operation is held inside the store does not end the operation's access: it stays Open until the held row is let go, which then ends with its own verdict, its memory untouched after the end", perDir: true, run: checkHeldSibling},
	{name: "final-results-stay", needs: "nothing", proves: "final statuses and the access end never change, across later polls and a Drain", perDir: true, run: checkFinalResultsStay},
	{name: "unprovable-terminal", needs: "Get and the UnprovableGets hook", proves: "Unprovable access is terminal, makes Drain answer false (its context already ended or with time left), and keeps the region registered", run: checkUnprovableTerminal},

	// Work, cancel, drain, regions, close: rules 4, 5 and 6.
	{name: "held-row", needs: "the Hold hook", proves: "a row held inside the store delays neither another call's admission nor Drain, which answers false while it is open", perDir: true, run: checkHeldRow},
	{name: "drain-waits-for-rows", needs: "the Hold hook", proves: "Drain with time left waits within its context for a row running in the store, and answers true once it ends", perDir: true, run: checkDrainWaitsForRows},
	{name: "drain-deadline", needs: "the Hold hook", proves: "Drain whose context ends while a row runs in the store answers false, and Put and Get are refused after it, as after every Drain that answers false", perDir: true, run: checkDrainDeadline},
	{name: "drain-busy-callback", needs: "nothing (a worker of the driver's own that calls onChange)", proves: "while a worker is inside onChange, Drain answers false, its context already ended or ending while it waits, and true once the callback returned", perDir: true, run: checkDrainBusyCallback},
	{name: "cancel", needs: "Cancel and the Pause hook", proves: "with Cancel, rows no worker took end Cancelled, their memory untouched", perDir: true, run: checkCancel},
	{name: "cancel-running", needs: "the Hold hook", proves: "Cancel of a row running in the store leaves the row to run on (or end Cancelled untouched), and its memory is not touched once access reads Ended", perDir: true, run: checkCancelRunning},
	{name: "drain-cancels-queued", needs: "the Pause hook", proves: "Drain cancels rows no worker took, answering true without waiting for them and only after the callback for that change returned", perDir: true, run: checkDrainCancelsQueued},
	{name: "unregister-busy", needs: "the Hold hook", proves: "Unregister of a region an open operation covers is refused with ErrDriverRejected and the region stays live", perDir: true, run: checkUnregisterBusy},
	{name: "unregister-queued", needs: "the Pause hook", proves: "Unregister of a region whose operation no worker took yet is refused with ErrDriverRejected and the region stays live", perDir: true, run: checkUnregisterQueued},
	{name: "unregister-later-row", needs: "MaxRowsPerOp 0 or 2 and more; the Pause hook (rows no worker took), the Hold hook (rows running in the store), or both; a get, a put or the Seed hook", proves: "Unregister of any region an operation with rows in several regions covers, the regions only its later rows touch included, is refused with ErrDriverRejected while the rows wait unstarted or run in the store, and the regions stay live", perDir: true, run: checkUnregisterLaterRow},
	{name: "unregister-revokes", needs: "a put, or the Seed hook", proves: "Unregister of an idle region succeeds, and later rows in it are refused", run: checkUnregisterRevokes},
	{name: "rejects-after-drain", needs: "a put, or the Seed hook", proves: "after a Drain, Put and Get are refused with ErrDriverRejected and record nothing", run: checkRejectsAfterDrain},
	{name: "rejects-after-false-drain", needs: "nothing (a worker of the driver's own that calls onChange)", proves: "after a Drain that answered false, Put and Get are refused with ErrDriverRejected and record nothing", perDir: true, run: checkRejectsAfterFalseDrain},
	{name: "close", needs: "a put, or the Seed hook", proves: "Close is refused before a true Drain or with a region registered, keeps everything, and succeeds after both", run: checkClose},
	{name: "close-after-false-drain", needs: "nothing (a worker of the driver's own that calls onChange)", proves: "Close after only Drains that answered false is refused even with every region unregistered, and succeeds after a Drain that returned true", perDir: true, run: checkCloseAfterFalseDrain},
	{name: "together-validates", needs: "RegionsTogether", proves: "RegisterRegions with one bad region refuses the whole batch (ErrDriverRejected and ErrInvalidRegion) and registers none of it", run: checkTogetherValidates},
	{name: "together-revokes", needs: "RegionsTogether; a put, or the Seed hook", proves: "UnregisterRegions revokes every region of the batch", run: checkTogetherRevokes},
	{name: "together-busy", needs: "RegionsTogether and the Hold hook", proves: "UnregisterRegions with one region busy is refused and keeps the whole batch registered", perDir: true, run: checkTogetherBusy},

	// Recycling: the rules of contract.Recycler.
	{name: "recycle-ends-unprovable", needs: "contract.Recycler, Get and the UnprovableGets hook; the FinishStrays hook to see a transfer left running", proves: "Recycle ends an Unprovable operation's access (Ended, onChange called before it returns), after which no byte of its memory is written even when the store's abandoned transfers run to their end, Drain answers true and the region unregisters", run: checkRecycleEndsUnprovable},
	{name: "recycle-waits-for-rows", needs: "contract.Recycler and the Hold hook", proves: "Recycle whose context ends while a row is inside the store fails with ErrDriverRejected and changes no access; with time left it waits for the row, which keeps the store's verdict", perDir: true, run: checkRecycleWaitsForRows},
	{name: "recycle-keeps-registrations", needs: "contract.Recycler; a put, or the Seed hook", proves: "a region registered before Recycle stays registered after it: rows in it move both ways, and it unregisters", run: checkRecycleKeepsRegistrations},

	// Lookup: the rules of contract.Looker.
	{name: "lookup-count", needs: "contract.Looker", proves: "Lookup appends exactly one Presence per name, in batch order, to the dst it is given (dst[:0]), whatever dst holds, and never changes an answer it returned", run: checkLookupCount},
	{name: "lookup-refusals", needs: "contract.Looker; with the HoldLookups hook a refused lookup that asked the store anyway shows", proves: "a lookup with no key maker (Keys nil), an empty name, a name the key maker has no key for or a name twice, and every lookup after a Drain, is refused with ErrDriverRejected and asks nothing of the store", run: checkLookupRefusals},
	{name: "lookup-absent", needs: "contract.Looker", proves: "a name never stored reads Absent or Unknown, never Present or InFlight", run: checkLookupAbsent},
	{name: "lookup-present", needs: "contract.Looker; a put, or the Seed hook", proves: "a name whose object a put of the driver (ended Ready) or another writer stored reads Present, in batch order beside a name never stored", run: checkLookupPresent},
	{name: "lookup-writer-holds-key", needs: "contract.Looker and the Writing hook", proves: "a key another writer is still writing is not Present (InFlight with LookupInFlight), is Present once the writer finished the object, and neither once it abandoned it", run: checkLookupWriterHoldsKey},
	{name: "lookup-own-put", needs: "contract.Looker, Put and the Hold hook", proves: "a key this driver's own put is writing (held inside the store) is not Present (InFlight with LookupInFlight), and is Present once the put ended Ready", run: checkLookupOwnPut},
	{name: "lookup-whole", needs: "contract.Looker, Put and the Crash hook; Get or the Object hook", proves: "a name reads Present only if a get made right after reads its object whole (or, with PresenceFromIndex, ends Fault): a put that crashed in the store (ended Fault) may leave a whole object, which may read Present, never a torn one or none", run: checkLookupWhole},
	{name: "lookup-deadline", needs: "contract.Looker and the HoldLookups hook", proves: "a lookup held inside the store returns once its context ends, within Wait, with Unknown for the held names; while it is inside, abandoned or not, Drain answers false and Close is refused; once it is let go Drain answers true", run: checkLookupDeadline},
	{name: "lookup-concurrent", needs: "contract.Looker; a put or the Seed hook; Get or the Object hook to read back what read Present; the HoldLookups hook for a lookup held beside a put and a get", proves: "lookups from several goroutines beside a put and a get never read Absent or InFlight for a stored name, nor Present for one a get then finds absent or short, and touch no lent memory; a lookup held inside the store holds up no Put, Get or Poll", run: checkLookupConcurrent},
}
