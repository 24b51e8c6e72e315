package conformance

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/broken"
	"github.com/kvshare/kvshare/patience"
)

// selfWait is the Wait of every harness of the self-test. The self-test
// runs thorough (see Harness.Thorough), so each run ends by waiting it
// out once; the catches run side by side, so the self-test takes about
// one selfWait plus the work, and a catch never depends on a bound
// tighter than this.
const selfWait = 3 * time.Second

// selfWaitText is selfWait as the suite scales it (KVSHARE_WAIT_SCALE)
// and as its findings write it.
var selfWaitText = patience.Scaled(selfWait).String()

// pairings says, for every broken driver, which check must catch it and
// what its finding says. opts are the driver's options (a one-direction
// driver shows the check works without the other direction); control,
// when set, the conforming driver's instead; shape, when set, adjusts
// both harnesses (a hook taken away shows the check does without it).
var pairings = []struct {
	rule      broken.Rule
	check     string
	violation string
	opts      memdrv.Options
	control   *memdrv.Options
	shape     func(*Harness)
}{
	{rule: broken.WrongResultCount, check: "result-count", violation: "Poll returns exactly one status per row"},
	{rule: broken.NoOnChange, check: "on-change", violation: "onChange was not called after the change"},
	{rule: broken.OnChangeAfterDrain, check: "no-callback-after-drain", violation: "after Drain returned true: no callback follows"},
	{rule: broken.AccessEndsBeforeResults, check: "access-after-results", violation: "access leaves Open only after every row is final"},
	{rule: broken.ResultsChangeAfterFinal, check: "final-results-stay", violation: "a final status never changes"},
	{rule: broken.UnregisterWhileBusy, check: "unregister-busy", violation: "Unregister succeeded while the operation covering region"},
	{rule: broken.DrainTrueWhileLive, check: "held-row", violation: "Drain returned true while the row is held"},
	{rule: broken.DrainTrueWhileLive, check: "drain-deadline/get", violation: "Drain returned true when its context ended while the row still ran in the store"},
	{rule: broken.UnwrappedError, check: "admission", violation: "does not wrap ErrDriverRejected", opts: memdrv.Options{Put: true}},
	{rule: broken.WritesOutsideSpan, check: "get-round-trip", violation: "was written: a get writes only inside its spans"},
	{rule: broken.LongObjectSpills, check: "long-object", violation: "was written: an object longer than its row is refused with nothing written"},
	{rule: broken.ShortObjectReady, check: "short-object", violation: "ended ready, want fault"},
	{rule: broken.ReadyForAbsent, check: "absent-key", violation: "ended ready, want miss", opts: memdrv.Options{Get: true}},
	{rule: broken.ReadyForAbsent, check: "absent-key", violation: "ended ready, want miss or fault", opts: memdrv.Options{NoAbsentIsMiss: true}},
	{rule: broken.IgnoresCancel, check: "cancel", violation: "ended ready, want cancelled"},
	{rule: broken.UnprovableNotTerminal, check: "unprovable-terminal", violation: "Unprovable is terminal"},
	{rule: broken.PanicsInPut, check: "never-panics", violation: "Put panicked"},
	{rule: broken.NilOperation, check: "nil-operation", violation: "returned a nil operation and a nil error"},

	{rule: broken.GetWritesAfterEnd, check: "get-round-trip", violation: "changed after the operation's access ended"},
	{rule: broken.PutRereadsAfterEnd, check: "put-round-trip", violation: "the bytes the suite wrote over the row's memory after the put's access ended"},
	{rule: broken.CancelEndsRunningRow, check: "cancel-running/get", violation: "changed after the operation's access ended"},
	{rule: broken.CancelEndsRunningRow, check: "cancel-running/put", violation: "the bytes the suite wrote over the row's memory after the put's access ended"},
	{rule: broken.UnregisterIgnoresQueued, check: "unregister-queued", violation: "Unregister succeeded while the operation's row in region"},
	{rule: broken.DrainIgnoresCallbacks, check: "drain-busy-callback", violation: "returned true while a worker was inside onChange", shape: noHoldNoPause},
	{rule: broken.DrainTrueWhenDeadline, check: "drain-deadline", violation: "Drain returned true when its context ended while the row still ran in the store"},
	{rule: broken.DrainTrueWhenDeadline, check: "drain-busy-callback", violation: "Drain returned true when its context ended while a worker was inside onChange", shape: noHoldNoPause},
	{rule: broken.DrainTrueUnprovableWithTime, check: "unprovable-terminal", violation: "its context with " + selfWaitText + " left, returned true while the operation's access is unprovable"},
	{rule: broken.AdmitsAfterFalseDrain, check: "rejects-after-false-drain", violation: "admitted, want refused with ErrDriverRejected: a Drain stops taking work, whatever it answers", shape: noHoldNoPause},
	{rule: broken.CloseAfterFalseDrain, check: "close-after-false-drain", violation: "Close succeeded after only Drains that answered false", shape: noHoldNoPause},
	{rule: broken.RowsReversed, check: "verdict-order/get", violation: "rows of mixed verdicts end each with its own verdict, in batch order"},
	{rule: broken.RowsReversed, check: "verdict-order/put", violation: "ended ready, want not-ready: rows of mixed verdicts", opts: memdrv.Options{MaxRowsPerOp: 2}},
	{rule: broken.SecondPutReady, check: "second-put", violation: "ended ready, want not-ready: another put of this driver was still writing the key"},
	{rule: broken.LateOnChangeAfterDrain, check: "no-callback-after-drain/put", violation: "after Drain returned true: no callback follows"},
	{rule: broken.DrainCallbackUnderLock, check: "drain-cancels-queued/get", violation: "Poll called from inside onChange did not return within"},
	{rule: broken.DeviceRefused, check: "device-memory", violation: "Register of a device region (2 slots of 4096 bytes) failed though the driver declares DeviceMemory",
		control: &memdrv.Options{DeviceMemory: true}, shape: func(h *Harness) { h.LendDevice = true }},

	{rule: broken.UnregisterFirstRowOnly, check: "unregister-later-row/get", violation: "an operation keeps busy every region any of its rows covers, not only its first row's"},
	{rule: broken.UnregisterFirstRowOnly, check: "unregister-later-row/put", violation: "not final (rows of it held running in the store)", shape: noPause},
	{rule: broken.AdmitsAfterDrainDeadline, check: "drain-deadline/get", violation: "admitted, want refused with ErrDriverRejected: a Drain stops taking work, whatever it answers (this one answered false)"},
	{rule: broken.EndsAtFirstFault, check: "held-sibling/get", violation: `access read ended while row 0 (name "held-0") was still held inside the store`},
	{rule: broken.EndsAtFirstFault, check: "held-sibling/put", violation: `access read ended while row 0 (name "held-0") was still held inside the store`, opts: memdrv.Options{Put: true}},
	{rule: broken.NamesAfterEnd, check: "names-after-end", violation: "the key maker was handed the row's name after the operation's access ended"},
	{rule: broken.CancelCallsBack, check: "no-callback-after-drain/get", violation: "after Drain returned true: no callback follows"},

	{rule: broken.WrongLookupCount, check: "lookup-count", violation: "Lookup appends exactly one Presence per name, in batch order, to dst[:0]"},
	{rule: broken.AdmitsLookupAfterDrain, check: "lookup-refusals", violation: "(after a Drain): answered, want refused with ErrDriverRejected: after a Drain every lookup is refused"},
	{rule: broken.PresentForAbsent, check: "lookup-absent", violation: "reads present, want absent or unknown: the name was never stored"},
	{rule: broken.LookupRowsReversed, check: "lookup-present", violation: `name "stored-0" reads absent, want present`},
	{rule: broken.PresentWhileWriting, check: "lookup-writer-holds-key", violation: "reads present while another writer still writes its key"},
	{rule: broken.PresentForOwnPut, check: "lookup-own-put", violation: "reads present while this driver's own put of it"},
	{rule: broken.PresentForTorn, check: "lookup-whole", violation: `name "crashed" read present, but a get made right after ended [miss]`},
	{rule: broken.PresentForTorn, check: "lookup-whole", violation: `name "crashed" read present, but the store holds no complete object under its key`, opts: memdrv.Options{Put: true}},
	{rule: broken.LookupIgnoresDeadline, check: "lookup-deadline", violation: "did not return within " + selfWaitText + " once its context ended, its call held inside the store"},
	{rule: broken.DrainTrueWhileLookupInside, check: "lookup-deadline", violation: "Drain returned true while the lookup was held inside the store, its context not yet ended"},
	{rule: broken.DrainTrueWhileLookupInside, check: "lookup-deadline", violation: "Drain returned true while the lookup was abandoned at its context's end"},
	{rule: broken.LookupBlocksAdmission, check: "lookup-concurrent", violation: "Put did not return within " + selfWaitText + " (a lookup is held inside the store meanwhile: a lookup blocked in the store holds up no Put, Get or Poll)"},
	{rule: broken.LookupBlocksAdmission, check: "lookup-concurrent", violation: "Get did not return within " + selfWaitText + " (a lookup is held inside the store meanwhile", opts: memdrv.Options{Get: true}},
	{rule: broken.PresentForDeclined, check: "lookup-failed-put", violation: `name "declined" read present, but a get made right after ended [miss]`},
	{rule: broken.PresentForDeclined, check: "lookup-failed-put", violation: `name "declined" read present, but the store holds no complete object under its key`, opts: memdrv.Options{Put: true}},
	{rule: broken.AbsentWhenLookupFails, check: "lookup-store-fails", violation: `name "failing-stored" reads absent, want unknown: the store failed to answer for it`},
	{rule: broken.LookupAfterFalseDrain, check: "lookup-after-false-drain", violation: "(after a Drain that answered false): answered, want refused with ErrDriverRejected"},
	{rule: broken.LookupAfterClose, check: "lookup-after-close", violation: "(after Close, a name asked before it): answered, want refused with ErrDriverRejected"},
	{rule: broken.LookupNamesAfterReturn, check: "lookup-names-after-return", violation: "the key maker was handed the name after Lookup returned"},
	{rule: broken.QueuedPutNotInFlight, check: "lookup-in-flight", violation: `name "queued-0" reads absent while this driver's put of it is admitted and not yet taken by a worker (the Pause hook), want in-flight`},
	{rule: broken.InFlightAfterPutEnded, check: "lookup-in-flight", violation: `name "queued-0" reads in-flight, yet its put was cancelled before any worker took it (ended [cancelled])`},

	{rule: broken.TogetherBusyLastOnly, check: "together-busy/get", violation: "UnregisterRegions succeeded while an operation covering region r1 (the first of the batch's 3) has access open"},
	{rule: broken.TogetherBusyLastOnly, check: "together-busy/put", violation: "(the first of the batch's 3) has access open: a busy region keeps the whole batch registered, whichever region it is", opts: memdrv.Options{Put: true}},
	{rule: broken.CleanRefusalWhenLive, check: "register-fails-live", violation: "Register failed with a clean refusal"},
	{rule: broken.UnprovableEndsLater, check: "unprovable-terminal", violation: "at the end of the run its access reads ended, though it was last seen unprovable"},
	{rule: broken.CapabilitiesChangeAfterCrash, check: "capabilities-after-faults", violation: "Capabilities after a get's store call crashed returned"},
	{rule: broken.CapabilitiesChangeAfterCrash, check: "capabilities-after-faults", violation: "Capabilities after a Recycle returned", shape: noCrash},

	{rule: broken.RecycleStopsOneTransfer, check: "recycle-ends-every-transfer", violation: "changed after the operation's access ended"},
	{rule: broken.RecycleCallsBackFirst, check: "recycle-callbacks-after-change", violation: "each before the change it reports was visible: a Poll from inside the last read access unprovable"},
	{rule: broken.RecycleGivesUpEndsAccess, check: "recycle-gives-up", violation: "yet the operation's access went from Unprovable to Ended: a Recycle that gives up changes no access"},
	{rule: broken.RecycleGivesUpEndsAccess, check: "recycle-gives-up", violation: "after a Recycle that gave up, the operation reads access ended: a Recycle that gives up leaves every Unprovable operation Unprovable"},
	{rule: broken.RecycleAfterClose, check: "recycle-after-drain", violation: "Recycle after Close returned nil"},
	{rule: broken.UnregisterDuringRecycle, check: "recycle-refuses-calls", violation: "Unregister of region r3 returned nil while a Recycle ran, want refused"},
	{rule: broken.UnregisterDuringRecycle, check: "recycle-refuses-calls", violation: "Unregister of region r3 returned nil while a Recycle ran, want refused", opts: memdrv.Options{Get: true}},
}

// noPause takes away the hook that leaves rows unstarted: the check must
// do with the others.
func noPause(h *Harness) {
	inner := h.New
	h.New = func() (*Subject, error) {
		s, err := inner()
		if s != nil {
			s.Pause = nil
		}
		return s, err
	}
}

// noCrash takes away the hook that crashes store calls: the check must
// do with the others.
func noCrash(h *Harness) {
	inner := h.New
	h.New = func() (*Subject, error) {
		s, err := inner()
		if s != nil {
			s.Crash = nil
		}
		return s, err
	}
}

// noHoldNoPause takes away the hooks that hold a row in the store or
// leave it unstarted: the check must do without them.
func noHoldNoPause(h *Harness) {
	inner := h.New
	h.New = func() (*Subject, error) {
		s, err := inner()
		if s != nil {
			s.Hold, s.Pause = nil, nil
		}
		return s, err
	}
}

// brokenCatches pairs every broken driver with the check that must catch
// it, each against the plain in-memory driver with the same options.
func brokenCatches() []catch {
	var out []catch
	seen := map[string]int{}
	for _, p := range pairings {
		control := p.opts
		if p.control != nil {
			control = *p.control
		}
		name := "broken/" + string(p.rule) + "/" + p.check
		if seen[name]++; seen[name] > 1 {
			name += fmt.Sprintf("#%d", seen[name])
		}
		c := catch{
			name:      name,
			deviant:   brokenHarness(p.rule, p.opts),
			control:   memHarness(control, p.rule.Together()),
			check:     p.check,
			violation: p.violation,
		}
		if p.shape != nil {
			p.shape(&c.deviant)
			p.shape(&c.control)
		}
		out = append(out, c)
	}
	return out
}

// catch is one two-way test of the self-test: the check (a check's name,
// or a sub-check's such as "crash/get") must fail against the deviant
// driver, with a finding containing violation, and pass, not skip,
// against the conforming control driver.
type catch struct {
	name      string
	deviant   Harness
	control   Harness
	check     string
	violation string
	// also, when set, makes more assertions on the deviant run.
	also func(t *testing.T, deviant *record)
}

// caught is what running a catch recorded.
type caught struct{ deviant, control *record }

// run runs the catch's check against both drivers, side by side, each
// run thorough with the self-test's wait unless its harness set another.
func (c catch) run() caught {
	name, _, _ := strings.Cut(c.check, "/")
	var res caught
	var wg sync.WaitGroup
	for _, x := range []struct {
		h   Harness
		out **record
	}{{c.deviant, &res.deviant}, {c.control, &res.control}} {
		h := x.h
		if len(h.Only) == 0 {
			h.Only = []string{name}
		}
		h.Thorough = true
		if h.Wait == 0 {
			h.Wait = selfWait
		}
		root := &record{}
		*x.out = root
		wg.Go(func() { run(root, h) })
	}
	wg.Wait()
	return res
}

// assert holds what run recorded to the catch.
func (c catch) assert(t *testing.T, res caught) {
	t.Helper()
	r := res.deviant.find(c.check)
	require.NotNil(t, r, "check %q did not run", c.check)
	findings := append(r.findings(), res.deviant.rootFindings(c.check)...)
	require.NotEmpty(t, findings, "check %q passed against a driver that breaks it", c.check)
	require.True(t, anyContains(findings, c.violation),
		"check %q failed, but no finding names the violation %q; findings:\n%s", c.check, c.violation, strings.Join(findings, "\n"))
	assert.Empty(t, res.control.findings(), "check %q fails against the conforming driver too", c.check)
	for _, s := range r.all() {
		if len(s.findings()) == 0 {
			continue
		}
		ctl := res.control.find(s.name)
		if assert.NotNil(t, ctl, "%s did not run against the conforming driver", s.name) {
			assert.False(t, ctl.skipped, "%s skipped against the conforming driver: %s", s.name, ctl.skip)
		}
	}
	if c.also != nil {
		c.also(t, res.deviant)
	}
}

// runCatches runs every catch, all side by side: most of a catch's time
// is the thorough run's closing wait.
func runCatches(cs []catch) []caught {
	out := make([]caught, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() { out[i] = c.run() })
	}
	wg.Wait()
	return out
}

// allCatches is the self-test: every broken driver and every deviation
// the tests build over memdrv, each with the check that must catch it.
func allCatches() []catch {
	var out []catch
	for _, f := range []func() []catch{
		brokenCatches, admissionCatches, keyCatches, pollCatches, regionCatches,
		callbackCatches, verdictCatches, lateCatches, recycleCatches, elsewhereCatches,
	} {
		out = append(out, f()...)
	}
	return out
}

// TestSelfTest runs every catch of the self-test: each deviation must be
// caught by its check, on every run, and the check must pass against the
// conforming driver.
func TestSelfTest(t *testing.T) {
	cs := allCatches()
	seen := map[string]bool{}
	for _, c := range cs {
		require.False(t, seen[c.name], "catch %q twice", c.name)
		seen[c.name] = true
	}
	results := runCatches(cs)
	for i, c := range cs {
		t.Run(c.name, func(t *testing.T) { c.assert(t, results[i]) })
	}
}

// TestSelfTestEveryBrokenRulePaired requires a pairing for every rule the
// broken package has, and a real check for every pairing.
func TestSelfTestEveryBrokenRulePaired(t *testing.T) {
	paired := map[broken.Rule]bool{}
	for _, p := range pairings {
		paired[p.rule] = true
		name, _, _ := strings.Cut(p.check, "/")
		assert.Contains(t, checkNames(), name, "rule %q is paired with no check", p.rule)
	}
	for _, rule := range broken.AllRules() {
		assert.True(t, paired[rule], "broken rule %q has no pairing", rule)
	}
	assert.Len(t, broken.AllRules(), 61)
}

// TestSelfTestWholeSuite runs the whole suite, thorough, against each
// broken driver: the paired check fails, and the suite neither hangs nor
// crashes on the rest (what else fails is not asserted: one broken rule
// can show in several checks).
func TestSelfTestWholeSuite(t *testing.T) {
	roots := map[string]*record{} // one run per driver and harness shape
	var wg sync.WaitGroup
	for _, p := range pairings {
		key := wholeSuiteKey(p.rule, p.opts, p.shape != nil)
		if roots[key] != nil {
			continue
		}
		h := brokenHarness(p.rule, p.opts)
		if p.shape != nil {
			p.shape(&h)
		}
		h.Thorough, h.Wait = true, selfWait
		root := &record{}
		roots[key] = root
		wg.Go(func() { run(root, h) })
	}
	wg.Wait()
	for _, p := range pairings {
		t.Run(string(p.rule)+"/"+p.check, func(t *testing.T) {
			root := roots[wholeSuiteKey(p.rule, p.opts, p.shape != nil)]
			r := root.find(p.check)
			require.NotNil(t, r, "check %q did not run", p.check)
			assert.True(t, r.Failed() || len(root.rootFindings(p.check)) > 0, "check %q passed", p.check)
		})
	}
}

// wholeSuiteKey names the whole-suite run a pairing shares with others
// of the same driver and harness.
func wholeSuiteKey(rule broken.Rule, o memdrv.Options, shaped bool) string {
	return fmt.Sprintf("%s %+v %v", rule, o, shaped)
}

// TestSelfTestSilentDriverFailsFast runs the whole suite against a driver that
// never calls onChange: one wait runs out, and the run then polls, so a
// silent driver costs one Wait, not one per operation.
func TestSelfTestSilentDriverFailsFast(t *testing.T) {
	h := brokenHarness(broken.NoOnChange, memdrv.Options{})
	h.Wait = selfWait
	root := &record{}
	run(root, h)
	summary := strings.Join(root.logs, "\n")
	assert.Contains(t, summary, "; 1 waits ran out; the driver was seen not calling onChange in capabilities-stable, so later waits polled")
	assert.True(t, root.find("on-change/put").Failed())
	assert.True(t, root.find("poll-in-callback/get").Failed(), "a check that needs callbacks fails at once")
	assert.True(t, anyContains(root.find("poll-in-callback/get").findings(), "not waiting for one"))
}

func checkNames() []string {
	var out []string
	for _, c := range Checks() {
		out = append(out, c.Name)
	}
	return out
}
