package broken

// Rule names the one driver rule a broken driver breaks.
type Rule string

// The rules, in the order [Rules] returns them. Each comment says which
// driver rule of package contract is broken and how the deviation shows.
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
	// ReadyForAbsent breaks the AbsentIsMiss verdict (an absent key is
	// Miss): a get of an absent key answers Ready, the slot untouched.
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
)

var rules = []Rule{
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

// Rules returns every rule, in the order they are declared; a fresh
// slice each time.
func Rules() []Rule { return append([]Rule(nil), rules...) }

// String returns the rule's name.
func (r Rule) String() string { return string(r) }
