package broken

// Rule names the one driver rule a broken driver breaks.
type Rule string

// The rules, in the order [AllRules] returns them. Each comment says
// which driver rule of package contract is broken and how the deviation
// shows.
const (
	// WrongResultCount breaks rule 3 (exactly one status per batch row):
	// Poll returns one status too few, always.
	WrongResultCount Rule = "wrong-result-count"
	// NoOnChange breaks rule 2 (onChange after every change): onChange is
	// never called; only polling sees progress.
	NoOnChange Rule = "no-on-change"
	// OnChangeAfterDrain breaks rule 2 (no callback follows a Drain that
	// returned true): after such a Drain, the next Drain, Unregister or
	// Close first calls every onChange the driver was ever given, once.
	OnChangeAfterDrain Rule = "on-change-after-drain"
	// AccessEndsBeforeResults breaks rule 3 (access leaves Open only after
	// every row is final): while any row is Pending, Poll reports access
	// Ended.
	AccessEndsBeforeResults Rule = "access-ends-before-results"
	// ResultsChangeAfterFinal breaks rule 3 (a final status never
	// changes): a row Poll once reported Ready reads Fault in every later
	// Poll.
	ResultsChangeAfterFinal Rule = "results-change-after-final"
	// UnregisterWhileBusy breaks rule 4 (a busy region stays registered):
	// Unregister answers nil while an operation with access Open or
	// Unprovable has a span in the region.
	UnregisterWhileBusy Rule = "unregister-while-busy"
	// DrainTrueWhileLive breaks rule 5 (Drain true only once every access
	// ended): when Drain would answer false while an operation's access is
	// still Open, it answers true.
	DrainTrueWhileLive Rule = "drain-true-while-live"
	// UnwrappedError breaks rule 1 (admission errors wrap
	// ErrDriverRejected): Put and Get refuse what memdrv refuses, with
	// the same text, but the error wraps nothing.
	UnwrappedError Rule = "unwrapped-error"
	// WritesOutsideSpan breaks rule 3 (a get never writes outside its
	// spans): a get row that ends Ready also flips the byte just past its
	// last span, when a live registration covers that byte.
	WritesOutsideSpan Rule = "writes-outside-span"
	// LongObjectSpills breaks rule 3 (an object longer than its row is
	// refused with nothing written): a get of a longer object still ends
	// Fault, but writes the whole object from the row's first byte on,
	// past the slot, as far as the registered region reaches.
	LongObjectSpills Rule = "long-object-spills"
	// ShortObjectReady breaks rule 3 (an object shorter than its row is a
	// Fault): a get of a shorter object lands it in the slot's head and
	// answers Ready.
	ShortObjectReady Rule = "short-object-ready"
	// ReadyForAbsent breaks the verdict of an absent key (Miss, or Fault
	// without AbsentIsMiss): a get of an absent key answers Ready, the
	// slot untouched.
	ReadyForAbsent Rule = "ready-for-absent"
	// IgnoresCancel breaks the Cancel capability (declared Cancel ends
	// rows no worker started): it declares Cancel, but Operation.Cancel
	// does nothing, so cancelled queued rows still run.
	IgnoresCancel Rule = "ignores-cancel"
	// UnprovableNotTerminal breaks rule 3 (Unprovable is terminal): after
	// Poll once reported access Unprovable, later Polls report Ended.
	UnprovableNotTerminal Rule = "unprovable-not-terminal"
	// PanicsInPut breaks rule 1 (Put and Get never panic): Put panics in
	// the caller's goroutine, admitting nothing.
	PanicsInPut Rule = "panics-in-put"
	// NilOperation breaks rule 1 (never a nil operation without an
	// error): Get returns (nil, nil), admitting nothing.
	NilOperation Rule = "nil-operation"

	// GetWritesAfterEnd breaks what access Ended promises (the store never
	// touches the memory again): once a Poll reported a get's access
	// Ended, the driver's next call (any method, Poll and Cancel of any
	// operation included) writes each Ready row's object into its spans
	// once more.
	GetWritesAfterEnd Rule = "get-writes-after-end"
	// PutRereadsAfterEnd breaks what access Ended promises for a put: once
	// a Poll reported a put's access Ended, the driver's next call reads
	// each Ready row's spans again and stores what it read under the
	// row's key, in place of the object.
	PutRereadsAfterEnd Rule = "put-rereads-after-end"
	// CancelEndsRunningRow breaks rule 3 (access ends only once the store
	// is done with the memory): Cancel of an operation with a row running
	// in the store (taken by a worker, not final) makes every later Poll
	// report the rows not yet final Cancelled and access Ended, while the
	// row runs on and its transfer touches its spans when it completes.
	CancelEndsRunningRow Rule = "cancel-ends-running-row"
	// UnregisterIgnoresQueued breaks rule 4 (a busy region stays
	// registered): Unregister counts only rows a worker took, so a region
	// that only rows no worker took yet keep busy is answered nil.
	UnregisterIgnoresQueued Rule = "unregister-ignores-queued"
	// DrainIgnoresCallbacks breaks rule 2 (Drain cannot return before the
	// last callback): when every access ended and nothing is Unprovable,
	// Drain answers true while onChange calls are still running.
	DrainIgnoresCallbacks Rule = "drain-ignores-callbacks"
	// DrainTrueWhenDeadline breaks rule 5 (true only if every access
	// ended): a Drain whose context still had time when it was called
	// answers true when that context ends while work still runs. Asked
	// with a context already ended, it answers honestly.
	DrainTrueWhenDeadline Rule = "drain-true-when-deadline"
	// DrainTrueUnprovableWithTime breaks rule 5 (false while an operation
	// is Unprovable): a Drain whose context still has time answers true
	// when all that keeps it from true is Unprovable operations. Asked
	// with a context already ended, it answers honestly.
	DrainTrueUnprovableWithTime Rule = "drain-true-unprovable-with-time"
	// AdmitsAfterFalseDrain breaks rule 5 (Drain stops taking work): a
	// Drain asked with a context already ended while work still runs
	// answers false and stops nothing, so Put and Get are still admitted.
	AdmitsAfterFalseDrain Rule = "admits-after-false-drain"
	// CloseAfterFalseDrain breaks rule 6 (Close only after a true Drain):
	// once every region is unregistered, Close answers nil after any
	// Drain, true or false.
	CloseAfterFalseDrain Rule = "close-after-false-drain"
	// RowsReversed breaks rule 3 (statuses in batch order): Poll returns
	// the rows' statuses in reverse order.
	RowsReversed Rule = "rows-reversed"
	// SecondPutReady breaks the NotReady verdict: a put of a key that
	// another put of this driver is still writing ends Ready instead of
	// NotReady.
	SecondPutReady Rule = "second-put-ready"
	// LateOnChangeAfterDrain breaks rule 2 (no callback follows a Drain
	// that returned true): a little after each Drain that returned true
	// (lateBy), on a goroutine of its own, it calls every onChange it was
	// ever given once more.
	LateOnChangeAfterDrain Rule = "late-on-change-after-drain"
	// DrainCallbackUnderLock breaks rule 2 (onChange never under a lock
	// the caller could need): every Poll takes a lock of the driver, and
	// Drain, holding it, calls the onChange of each operation whose rows
	// it cancelled.
	DrainCallbackUnderLock Rule = "drain-callback-under-lock"
	// DeviceRefused breaks the DeviceMemory capability: it declares
	// DeviceMemory whatever the options say, yet Register refuses every
	// Device region.
	DeviceRefused Rule = "device-refused"

	// UnregisterFirstRowOnly breaks rule 4 (a busy region stays
	// registered): Unregister decides whether a region is busy from the
	// first row of each operation alone, so a region that only a later
	// row of an open operation covers is answered nil (and stays
	// registered in the wrapped driver, as under UnregisterWhileBusy).
	UnregisterFirstRowOnly Rule = "unregister-first-row-only"
	// AdmitsAfterDrainDeadline breaks rule 5 (Drain stops taking work,
	// whatever it answers): a Drain whose context still had time when it
	// was called waits for the rows running in the store before it stops
	// anything, and when its context ends first answers false having
	// stopped nothing, so Put and Get are still admitted. Asked with a
	// context already ended, it drains honestly.
	AdmitsAfterDrainDeadline Rule = "admits-after-drain-deadline"
	// EndsAtFirstFault breaks rule 3 (access ends only once no row can
	// touch its memory): once a row of an operation ends Fault while
	// another row is not final, every later Poll reports the rows not
	// final then Fault and access Ended, while they run on in the store
	// and touch their spans when they complete.
	EndsAtFirstFault Rule = "ends-at-first-fault"
	// NamesAfterEnd breaks the lending of names (borrowed until the
	// operation's access ends): every Drain first logs the operations
	// whose access ended since the last Drain, building each row's key
	// then from the batch's names with its key maker.
	NamesAfterEnd Rule = "names-after-end"
	// CancelCallsBack breaks rule 2 (no callback follows a Drain that
	// returned true): Operation.Cancel calls onChange once the wrapped
	// Cancel returned, whether or not a row changed, after a true Drain
	// too.
	CancelCallsBack Rule = "cancel-calls-back"

	// WrongLookupCount breaks the Looker's answer (one Presence per
	// name, appended to dst[:0]): Lookup returns one presence too few,
	// always.
	WrongLookupCount Rule = "wrong-lookup-count"
	// AdmitsLookupAfterDrain breaks the Looker's refusals (every lookup
	// after Drain is refused, nothing asked): once Drain was called,
	// whatever it answered, Lookup answers as before, from the store.
	AdmitsLookupAfterDrain Rule = "admits-lookup-after-drain"
	// PresentForAbsent breaks Absent (no object has the key): Lookup
	// answers Present for every name the store holds no object for.
	PresentForAbsent Rule = "present-for-absent"
	// LookupRowsReversed breaks the Looker's order (one Presence per
	// name, in batch order): Lookup returns the presences in reverse.
	LookupRowsReversed Rule = "lookup-rows-reversed"
	// PresentWhileWriting breaks Looker rule 1 (never Present for a key
	// being written): a key another writer holds, its object not yet
	// readable, is answered Present, as by a driver that takes "the key
	// exists in the store" for a complete object.
	PresentWhileWriting Rule = "present-while-writing"
	// PresentForOwnPut breaks Looker rule 2 (a key this driver is
	// putting is never Present before its put is Ready): a key a put of
	// this driver was admitted for and has not ended is answered
	// Present, as by a driver that counts a key stored from its put's
	// admission.
	PresentForOwnPut Rule = "present-for-own-put"
	// PresentForTorn breaks Looker rule 1 (never Present for an object a
	// get could not read whole): a key whose put of this driver ended
	// Fault (its store call crashed) is answered Present, as by a driver
	// that records a key as stored once its store call started: the
	// store holds no whole object under it.
	PresentForTorn Rule = "present-for-torn"
	// LookupIgnoresDeadline breaks Looker rule 3 (a lookup answers
	// within its context; what the store did not answer is Unknown): a
	// lookup held inside the store returns only once the store answers,
	// whatever its context does.
	LookupIgnoresDeadline Rule = "lookup-ignores-deadline"
	// DrainTrueWhileLookupInside breaks Looker rule 3 (Drain answers
	// false while any lookup is inside the store): when all that keeps
	// Drain from true is lookups inside the store, abandoned ones
	// included, it answers true.
	DrainTrueWhileLookupInside Rule = "drain-true-while-lookup-inside"
	// LookupBlocksAdmission breaks Looker rule 4 (Lookup is safe for
	// concurrent use with Put, Get and Poll, so one blocked in the store
	// holds up none of them): a lookup holds a lock of the driver for as
	// long as it is inside the store, and Put and Get wait for it.
	LookupBlocksAdmission Rule = "lookup-blocks-admission"

	// TogetherBusyLastOnly breaks RegionsTogether's busy batch (while any
	// region of a batch is busy, UnregisterRegions fails and the whole
	// batch stays registered): UnregisterRegions asks only whether the
	// batch's last region is busy (rows queued, running or unprovable in
	// it, as memdrv's RowsIn counts them), so a batch that only an
	// earlier region keeps busy is answered nil and stays registered in
	// the wrapped driver until it is idle. Only a driver from
	// [NewTogether] registers batches; one from [New] behaves as memdrv.
	TogetherBusyLastOnly Rule = "together-busy-last-only"
	// CleanRefusalWhenLive breaks Register's failure rule (a registration
	// that may be live is a *contract.RegistrationError carrying its
	// handle): when the wrapped driver's Register (or RegisterRegions)
	// fails in a way that may have left the registration live, it
	// answers an error wrapping ErrDriverRejected alone, a clean refusal,
	// and keeps the registration in the wrapped driver, revoking it
	// itself after a Drain that returned true or at Close.
	CleanRefusalWhenLive Rule = "clean-refusal-when-live"
	// UnprovableEndsLater breaks rule 3 (Unprovable is terminal but
	// through a Recycle) as a driver that trusts a transfer timeout does:
	// once unprovableFor has passed since a Poll first reported an
	// operation's access Unprovable, later Polls report Ended; Polls
	// before then report Unprovable, the next one included. The wrapped
	// driver keeps the operation Unprovable (Drain, Unregister).
	UnprovableEndsLater Rule = "unprovable-ends-later"
	// CapabilitiesChangeAfterCrash breaks Capabilities' rule (the same
	// value every time): once a store call crashed (see
	// memdrv.Driver.Crash), or a Recycle ended every access, Capabilities
	// reports Cancel the other way round, as a driver that reads its
	// capabilities again from the store's connection after reconnecting
	// would.
	CapabilitiesChangeAfterCrash Rule = "capabilities-change-after-crash"
)

// The rules of contract.Recycler (the optional interface that ends the
// access a driver could not prove ended), in the order [AllRules]
// returns them, after those above.
const (
	// RecycleStopsOneTransfer breaks Recycler rule 4 (on nil, nothing the
	// old resources did can touch lent memory any more): Recycle tears
	// down only the oldest transfer the store gave up on
	// (memdrv.Driver.StopOneStrayOnRecycle), leaves the others running,
	// and still reports every access Ended, so an operation of several
	// rows whose transfers were abandoned has every row but one written
	// once they run to their end (memdrv.Driver.FinishStrays).
	RecycleStopsOneTransfer Rule = "recycle-stops-one-transfer"
	// RecycleCallsBackFirst breaks Recycler rule 4 with rule 2 (onChange
	// follows the change it reports): Recycle calls the onChange of every
	// Unprovable operation before their access reads Ended, and not again
	// after (memdrv.Driver.CallBackBeforeEndOnRecycle), so a Poll from
	// inside the callback still reads Unprovable.
	RecycleCallsBackFirst Rule = "recycle-calls-back-first"
	// RecycleGivesUpEndsAccess breaks Recycler rule 3 (a Recycle whose
	// context ends first changes no access): when the wrapped Recycle
	// gives up, every operation then Unprovable reads Ended in every
	// later Poll, and its onChange is called before Recycle returns its
	// error, though nothing was torn down: the transfers the store gave
	// up on still run. The wrapped driver keeps them Unprovable.
	RecycleGivesUpEndsAccess Rule = "recycle-gives-up-ends-access"
	// RecycleAfterClose breaks Recycler rule 6 (after Close, Recycle is
	// refused with ErrDriverRejected): once Close returned nil, Recycle
	// answers nil, having done nothing.
	RecycleAfterClose Rule = "recycle-after-close"
	// UnregisterDuringRecycle breaks Recycler rule 1 (from the moment
	// Recycle is called until it returns, Register and Unregister are
	// refused): an Unregister made while a Recycle runs, which the
	// wrapped driver refuses, is answered nil, as by a driver whose
	// Unregister reaches the client being torn down; the region stays
	// registered in the wrapped driver, which revokes it after a Drain
	// that returned true or at Close, as under UnregisterWhileBusy.
	UnregisterDuringRecycle Rule = "unregister-during-recycle"
)

// The further rules of contract.Looker: a lookup beside a put that ended
// other than Ready, a store that fails the presence call, lookups after
// a Drain that answered false and after Close, a lookup's names read
// after it returned, and InFlight held to its rule. In the order
// [AllRules] returns them, after those above.
const (
	// PresentForDeclined breaks Looker rule 1 (never Present for an
	// object a get could not read whole): a key whose put of this driver
	// ended Declined (the store refused it on its own terms) is answered
	// Present, as by a driver that records a key as stored once its
	// store call returned, whatever the store answered.
	PresentForDeclined Rule = "present-for-declined"
	// AbsentWhenLookupFails breaks Unknown (what the store did not
	// answer is Unknown): a name the store failed to answer for
	// (memdrv.Driver.FailLookups) is answered Absent, as by a driver that
	// reads a failed presence call as "not there". A lookup whose context
	// ended still answers Unknown.
	AbsentWhenLookupFails Rule = "absent-when-lookup-fails"
	// LookupAfterFalseDrain breaks the Looker's refusals (every lookup
	// after Drain is refused, whatever Drain answered): until a Drain
	// answers true, Lookup answers as before, from the store, as by a
	// driver that stops answering lookups only once it drained.
	LookupAfterFalseDrain Rule = "lookup-after-false-drain"
	// LookupAfterClose breaks the Looker's refusals after Close: once
	// Close returned nil, Lookup answers from the store, as by a driver
	// whose Close replaces its drained state with a closed one its
	// Lookup never looks at.
	LookupAfterClose Rule = "lookup-after-close"
	// LookupNamesAfterReturn breaks the lending of a lookup's names
	// (borrowed until Lookup returns): the driver keeps every lookup's
	// batch and, at the start of its next call, builds each name's key
	// from it once more (a log of the lookups answered).
	LookupNamesAfterReturn Rule = "lookup-names-after-return"
	// QueuedPutNotInFlight breaks Looker rule 2 (with LookupInFlight, a
	// name this driver's put is writing reads InFlight, rows no worker
	// took yet included): a key whose put row is still queued (no row of
	// the region its span lies in is running) is answered Absent, as by a
	// driver that marks a key being written only once a worker takes its
	// row.
	QueuedPutNotInFlight Rule = "queued-put-not-in-flight"
	// InFlightAfterPutEnded breaks Looker rule 2 (InFlight is never
	// answered for a name no one writes): a key whose put of this driver
	// ended other than Ready is answered InFlight from then on, unless the
	// store holds a complete object under it, as by a driver that unmarks
	// a key being written only when its put ends Ready.
	InFlightAfterPutEnded Rule = "in-flight-after-put-ended"
)

// firstRules are the rules of [Rules]: the first sixteen.
var firstRules = []Rule{
	WrongResultCount,
	NoOnChange,
	OnChangeAfterDrain,
	AccessEndsBeforeResults,
	ResultsChangeAfterFinal,
	UnregisterWhileBusy,
	DrainTrueWhileLive,
	UnwrappedError,
	WritesOutsideSpan,
	LongObjectSpills,
	ShortObjectReady,
	ReadyForAbsent,
	IgnoresCancel,
	UnprovableNotTerminal,
	PanicsInPut,
	NilOperation,
}

// rules is every rule, in the order [AllRules] returns them.
var rules = append(append([]Rule(nil), firstRules...),
	GetWritesAfterEnd,
	PutRereadsAfterEnd,
	CancelEndsRunningRow,
	UnregisterIgnoresQueued,
	DrainIgnoresCallbacks,
	DrainTrueWhenDeadline,
	DrainTrueUnprovableWithTime,
	AdmitsAfterFalseDrain,
	CloseAfterFalseDrain,
	RowsReversed,
	SecondPutReady,
	LateOnChangeAfterDrain,
	DrainCallbackUnderLock,
	DeviceRefused,
	UnregisterFirstRowOnly,
	AdmitsAfterDrainDeadline,
	EndsAtFirstFault,
	NamesAfterEnd,
	CancelCallsBack,
	WrongLookupCount,
	AdmitsLookupAfterDrain,
	PresentForAbsent,
	LookupRowsReversed,
	PresentWhileWriting,
	PresentForOwnPut,
	PresentForTorn,
	LookupIgnoresDeadline,
	DrainTrueWhileLookupInside,
	LookupBlocksAdmission,
	TogetherBusyLastOnly,
	CleanRefusalWhenLive,
	UnprovableEndsLater,
	CapabilitiesChangeAfterCrash,
	RecycleStopsOneTransfer,
	RecycleCallsBackFirst,
	RecycleGivesUpEndsAccess,
	RecycleAfterClose,
	UnregisterDuringRecycle,
	PresentForDeclined,
	AbsentWhenLookupFails,
	LookupAfterFalseDrain,
	LookupAfterClose,
	LookupNamesAfterReturn,
	QueuedPutNotInFlight,
	InFlightAfterPutEnded,
)

// Rules returns the first sixteen rules, in the order they are declared;
// a fresh slice each time. It lists the same rules it always did, so
// that a consumer's table with an entry per rule (the binding's
// containment test has one) keeps passing when rules are added; such a
// table moves to [AllRules] when it takes up the new ones.
func Rules() []Rule { return append([]Rule(nil), firstRules...) }

// AllRules returns every rule, in the order they are declared: those of
// [Rules], then the rules added for the conformance suite's checks of
// memory after access end, Drain, Close, busy regions, verdicts and
// callbacks, then those of operations with rows in several regions, a
// Drain that gives up, a row failing beside a running one, names read
// late and Cancel after a true Drain, then those of lookups (the
// optional contract.Looker), then those of batches of regions, failed
// registrations, Unprovable over time and Capabilities, then those of
// Recycle (the optional contract.Recycler), then the further ones of
// lookups (puts that ended other than Ready, a failed presence call,
// lookups after a false Drain and after Close, names read after a
// lookup returned, InFlight). A fresh slice each time.
func AllRules() []Rule { return append([]Rule(nil), rules...) }

// String returns the rule's name.
func (r Rule) String() string { return string(r) }
