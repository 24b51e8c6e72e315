package conformance

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/broken"
)

// pairings says, for every broken driver, which check must catch it and
// what its finding says. opts are the driver's options; a one-direction
// driver shows the check works without the other direction.
var pairings = []struct {
	rule      broken.Rule
	check     string
	violation string
	opts      memdrv.Options
}{
	{broken.WrongResultCount, "result-count", "Poll returns exactly one status per row", memdrv.Options{}},
	{broken.NoOnChange, "on-change", "onChange was not called after the change", memdrv.Options{}},
	{broken.OnChangeAfterDrain, "no-callback-after-drain", "after Drain returned true: no callback follows", memdrv.Options{}},
	{broken.AccessEndsBeforeResults, "access-after-results", "access leaves Open only after every row is final", memdrv.Options{}},
	{broken.ResultsChangeAfterFinal, "final-results-stay", "a final status never changes", memdrv.Options{}},
	{broken.UnregisterWhileBusy, "unregister-busy", "Unregister succeeded while the operation covering region", memdrv.Options{}},
	{broken.DrainTrueWhileLive, "held-row", "Drain returned true while the row is held", memdrv.Options{}},
	{broken.UnwrappedError, "admission", "does not wrap ErrDriverRejected", memdrv.Options{Put: true}},
	{broken.WritesOutsideSpan, "get-round-trip", "was written: a get writes only inside its spans", memdrv.Options{}},
	{broken.LongObjectSpills, "long-object", "was written: an object longer than its row is refused with nothing written", memdrv.Options{}},
	{broken.ShortObjectReady, "short-object", "ended ready, want fault", memdrv.Options{}},
	{broken.ReadyForAbsent, "absent-key", "ended ready, want miss", memdrv.Options{Get: true}},
	{broken.IgnoresCancel, "cancel", "ended ready, want cancelled", memdrv.Options{}},
	{broken.UnprovableNotTerminal, "unprovable-terminal", "Unprovable is terminal", memdrv.Options{}},
	{broken.PanicsInPut, "never-panics", "Put panicked", memdrv.Options{}},
	{broken.NilOperation, "nil-operation", "returned a nil operation and a nil error", memdrv.Options{}},
}

// TestBrokenDriversFail runs, for every broken driver, the check paired
// with it, and requires that very check to record the violation; then
// the same check, with the same options, against the plain in-memory
// driver, which it must pass, so the failure is the broken rule's doing.
func TestBrokenDriversFail(t *testing.T) {
	for _, p := range pairings {
		t.Run(string(p.rule), func(t *testing.T) {
			h := brokenHarness(p.rule, p.opts)
			if p.rule == broken.NoOnChange {
				h.Wait = time.Second // every wait runs out against it
			}
			assertCaught(t, h, memHarness(p.opts, false), p.check, p.violation)
		})
	}
}

// assertCaught runs check (a check's name, or a sub-check's such as
// "crash/get") against the deviant driver h builds and requires a
// finding of it to contain violation; then runs it against the
// conforming driver control builds, whose every sub-check that found the
// deviation must pass, not skip. It returns the record of the deviant
// run.
func assertCaught(t *testing.T, h, control Harness, check, violation string) *record {
	t.Helper()
	name, _, _ := strings.Cut(check, "/")
	h.Only = []string{name}
	root := &record{}
	run(root, h)
	r := root.find(check)
	require.NotNil(t, r, "check %q did not run", check)
	findings := r.findings()
	require.True(t, r.Failed(), "check %q passed against a driver that breaks it", check)
	require.True(t, anyContains(findings, violation),
		"check %q failed, but no finding names the violation %q; findings:\n%s", check, violation, strings.Join(findings, "\n"))

	control.Only = []string{name}
	ctl := &record{}
	run(ctl, control)
	assert.Empty(t, ctl.findings(), "check %q fails against the conforming driver too", check)
	for _, s := range r.all() {
		if len(s.findings()) == 0 {
			continue
		}
		c := ctl.find(s.name)
		if assert.NotNil(t, c, "%s did not run against the conforming driver", s.name) {
			assert.False(t, c.skipped, "%s skipped against the conforming driver: %s", s.name, c.skip)
		}
	}
	return root
}

// TestEveryBrokenRulePaired requires a pairing for every rule the broken
// package has, and a real check for every pairing.
func TestEveryBrokenRulePaired(t *testing.T) {
	paired := map[broken.Rule]bool{}
	for _, p := range pairings {
		paired[p.rule] = true
		assert.Contains(t, checkNames(), p.check, "rule %q is paired with no check", p.rule)
	}
	for _, rule := range broken.Rules() {
		assert.True(t, paired[rule], "broken rule %q has no pairing", rule)
	}
	assert.Len(t, broken.Rules(), 16)
}

// TestBrokenDriversWholeSuite runs the whole suite against each broken
// driver: the paired check fails, and the suite neither hangs nor
// crashes on the rest (what else fails is not asserted: one broken rule
// can show in several checks).
func TestBrokenDriversWholeSuite(t *testing.T) {
	for _, p := range pairings {
		t.Run(string(p.rule), func(t *testing.T) {
			h := brokenHarness(p.rule, p.opts)
			h.Wait = time.Second
			if p.rule == broken.NoOnChange {
				h.Wait = 50 * time.Millisecond // every wait runs out against it
			}
			root := &record{}
			run(root, h)
			assert.True(t, root.find(p.check).Failed(), "check %q passed", p.check)
		})
	}
}

func checkNames() []string {
	var out []string
	for _, c := range Checks() {
		out = append(out, c.Name)
	}
	return out
}
