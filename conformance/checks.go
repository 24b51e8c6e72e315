package conformance

// suite is every check, in the order Run runs them. doc.go lists each
// with its Proves line, under the same group headings; TestChecks holds
// the two in step.
var suite = []check{
	// Admission: rule 1, and what Capabilities declare.
	{name: "capabilities-stable", proves: "Capabilities returns the same value every time, and declares at least one direction", run: checkCapabilitiesStable},
	{name: "bad-region", proves: "Register refuses bad geometry with ErrDriverRejected and registers nothing", run: checkBadRegion},
	{name: "device-memory", proves: "without DeviceMemory, a Device region is refused with ErrDriverRejected and nothing is registered", run: checkDeviceMemory},
	{name: "admission", proves: "a batch with no rows, no key maker (Keys nil), an empty name, a name the key maker has no key for, a row without a span, a span of length 0 or less, or (without MultiSpan) a row of two spans is refused with ErrDriverRejected and records nothing: no callback, no object, no byte written, Drain true, the region idle", run: checkAdmission},
	{name: "extents", proves: "a span outside every registration (another mapping, straddling either end of a region) is refused with ErrDriverRejected and nothing is recorded", run: checkExtents},
	{name: "duplicate-key", proves: "a batch carrying a name (so a key) twice, short or long, is refused with ErrDriverRejected and nothing is recorded", run: checkDuplicateKey},
	{name: "nil-operation", proves: "an admitted Put or Get returns a non-nil operation", perDir: true, run: checkNilOperation},
	{name: "never-panics", proves: "Put and Get return, never panic, on good and bad batches alike", perDir: true, run: checkNeverPanics},
	{name: "hints", proves: "without Hints a get with a hint is refused and records nothing; with Hints it is served", run: checkHints},
	{name: "result-count", proves: "Poll appends exactly one status per batch row to the dst it is given, in every snapshot, and never changes a snapshot it returned", perDir: true, run: checkResultCount},

	// Moving bytes and verdicts: rule 3 and the RowStatus meanings.
	{name: "put-round-trip", proves: "a put stores each row's bytes exactly (read back by a get, or the Object hook) and writes no memory", run: checkPutRoundTrip},
	{name: "get-round-trip", proves: "a get lands each object byte for byte in its span and writes no byte outside it", run: checkGetRoundTrip},
	{name: "exact-key", proves: "a put stores each row under exactly the key the batch's key maker builds (the Object hook finds it there), and a get reads the object seeded under that key, names the key maker escapes included", perDir: true, run: checkExactKey},
	{name: "multi-span", proves: "with MultiSpan, a row of two spans moves as one object, its spans in order", perDir: true, run: checkMultiSpan},
	{name: "absent-key", proves: "a get of a key never stored is Miss with its slot untouched (Miss or Fault without AbsentIsMiss), never Ready", run: checkAbsentKey},
	{name: "writer-holds-key", proves: "a key another writer is still writing is NotReady in each direction, a get's slot untouched and the writer's object intact", perDir: true, run: checkWriterHoldsKey},
	{name: "short-object", proves: "a get of an object shorter than its row is a Fault, nothing written outside the slot", run: checkShortObject},
	{name: "long-object", proves: "a get of an object longer than its row is refused as a Fault, nothing written at all", run: checkLongObject},
	{name: "full-store", proves: "a put the store refuses on its own terms is Declined and stores nothing", run: checkFullStore},
	{name: "failed-read", proves: "a read the store fails is a Fault and access still leaves Open, nothing written outside the slot", run: checkFailedRead},
	{name: "crash", proves: "a crash inside the store call ends the rows Fault (or Cancelled, never run) and access leaves Open", perDir: true, run: checkCrash},

	// Callbacks and the operation's life: rules 2 and 3.
	{name: "on-change", proves: "onChange follows the changes of results and access, so polling only when it is called sees the operation settle", perDir: true, run: checkOnChange},
	{name: "poll-in-callback", proves: "Poll called from inside onChange returns: no callback runs under a lock Poll needs", perDir: true, run: checkPollInCallback},
	{name: "drain-waits-for-callback", proves: "Drain does not return true while the onChange for the last change is still running, and does once it returned", perDir: true, run: checkDrainWaitsForCallback},
	{name: "no-callback-after-drain", proves: "no onChange follows a Drain that returned true", perDir: true, run: checkNoCallbackAfterDrain},
	{name: "access-after-results", proves: "access leaves Open only after every row is final", perDir: true, run: checkAccessAfterResults},
	{name: "final-results-stay", proves: "final statuses and the access end never change, across later polls and a Drain", perDir: true, run: checkFinalResultsStay},
	{name: "unprovable-terminal", proves: "Unprovable access is terminal, makes Drain answer false, and keeps the region registered", run: checkUnprovableTerminal},

	// Work, cancel, drain, regions, close: rules 4, 5 and 6.
	{name: "held-row", proves: "a row held inside the store delays neither another call's admission nor Drain, which answers false while it is open", perDir: true, run: checkHeldRow},
	{name: "drain-waits-for-rows", proves: "Drain with time left waits within its context for a row running in the store, and answers true once it ends", perDir: true, run: checkDrainWaitsForRows},
	{name: "cancel", proves: "with Cancel, rows no worker took end Cancelled, their memory untouched", perDir: true, run: checkCancel},
	{name: "drain-cancels-queued", proves: "Drain cancels rows no worker took, answering true without waiting for them and only after the callback for that change returned", perDir: true, run: checkDrainCancelsQueued},
	{name: "unregister-busy", proves: "Unregister of a region an open operation covers is refused with ErrDriverRejected and the region stays live", perDir: true, run: checkUnregisterBusy},
	{name: "unregister-revokes", proves: "Unregister of an idle region succeeds, and later rows in it are refused", run: checkUnregisterRevokes},
	{name: "rejects-after-drain", proves: "after a Drain, Put and Get are refused with ErrDriverRejected and record nothing", run: checkRejectsAfterDrain},
	{name: "close", proves: "Close is refused before a true Drain or with a region registered, keeps everything, and succeeds after both", run: checkClose},
	{name: "together-validates", proves: "RegisterRegions with one bad region refuses the whole batch (ErrDriverRejected and ErrInvalidRegion) and registers none of it", run: checkTogetherValidates},
	{name: "together-revokes", proves: "UnregisterRegions revokes every region of the batch", run: checkTogetherRevokes},
	{name: "together-busy", proves: "UnregisterRegions with one region busy is refused and keeps the whole batch registered", perDir: true, run: checkTogetherBusy},
}
