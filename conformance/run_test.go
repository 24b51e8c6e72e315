package conformance

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/patience"
)

// TestMemdrv runs the whole suite against the in-memory driver in the
// shapes the project uses: every check must pass or skip for a reason.
func TestMemdrv(t *testing.T) {
	for _, c := range []struct {
		name     string
		opts     memdrv.Options
		together bool
	}{
		{"plain", memdrv.Options{}, false},
		{"fifo", memdrv.Options{Workers: 1}, false},
		{"put-only", memdrv.Options{Put: true}, false},
		{"get-only", memdrv.Options{Get: true}, false},
		{"together", memdrv.Options{}, true},
		{"hints-multispan-capped", memdrv.Options{Hints: true, MultiSpan: true, MaxRowsPerOp: 2, NoCancel: true}, false},
		{"device-memory", memdrv.Options{DeviceMemory: true}, false},
		{"no-absent-is-miss", memdrv.Options{NoAbsentIsMiss: true}, false},
		{"thorough", memdrv.Options{}, false},
		{"bounded-store", memdrv.Options{}, false},
		{"bounded-store-evicting", memdrv.Options{}, false},
		{"bounded-store-multispan", memdrv.Options{MultiSpan: true, Hints: true}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := memHarness(c.opts, c.together)
			if strings.HasPrefix(c.name, "bounded-store") {
				h = boundedHarness(c.opts, c.name == "bounded-store-evicting")
			}
			h.LendDevice = c.opts.DeviceMemory
			if c.name == "thorough" {
				h.Thorough, h.Wait = true, time.Second
			}
			Run(t, h)
		})
	}
}

// TestRunBareHarness runs the suite with a harness that stages nothing:
// the checks that need a hook skip and say which, the rest pass.
func TestRunBareHarness(t *testing.T) {
	root := &record{}
	run(root, Harness{New: func() (*Subject, error) {
		return &Subject{Driver: memdrv.New(memdrv.NewStore(), memdrv.Options{})}, nil
	}})
	require.Empty(t, root.findings())
	for name, hook := range map[string]string{
		"held-row/get":               "no Hold hook",
		"cancel/put":                 "no Pause hook",
		"crash/get":                  "no Crash hook",
		"writer-holds-key/put":       "no Writing hook",
		"unprovable-terminal":        "no UnprovableGets hook",
		"full-store":                 "no Full hook",
		"exact-key/put":              "no Object hook",
		"exact-key/get":              "no Seed hook",
		"second-put":                 "no Hold hook",
		"cancel-running/get":         "no Hold hook",
		"drain-deadline/put":         "no Hold hook",
		"unregister-queued/put":      "no Pause hook",
		"verdict-order/put":          "no Writing hook",
		"held-sibling/get":           "no HoldKeys hook",
		"unregister-later-row/put":   "no Pause or Hold hook",
		"lookup-deadline":            "no HoldLookups hook",
		"lookup-own-put":             "no Hold hook",
		"lookup-store-fails":         "no FailLookups hook",
		"lookup-in-flight":           "no Pause hook",
		"recycle-ends-unprovable":    "no UnprovableGets hook",
		"recycle-waits-for-rows/get": "no Hold hook",
		"register-fails-live":        "no FailNextRegistration hook",
	} {
		r := root.find(name)
		require.NotNil(t, r, name)
		assert.True(t, r.skipped, "%s ran without the hook", name)
		assert.Contains(t, r.skip, hook, name)
	}
	assert.Contains(t, root.find("together-busy/put").skip, "does not implement RegionsTogether")
	for _, name := range []string{"drain-busy-callback/put", "rejects-after-false-drain/get", "close-after-false-drain/put", "verdict-order/get", "names-after-end", "lookup-count", "lookup-refusals", "lookup-concurrent", "lookup-after-false-drain", "lookup-after-close", "lookup-names-after-return", "recycle-keeps-registrations"} {
		r := root.find(name)
		require.NotNil(t, r, name)
		assert.False(t, r.skipped, "%s needs no hook, yet skipped: %s", name, r.skip)
	}

	// The summary says what ran and why the rest did not.
	summary := strings.Join(root.logs, "\n")
	assert.Contains(t, summary, "conformance summary (normal): 104 checks: 46 passed, 0 failed, 58 skipped")
	assert.Contains(t, summary, "skipped (hook missing): held-row/get: the harness cannot hold a get inside the store (no Hold hook)")
	assert.Contains(t, summary, "skipped (capability not declared): multi-span/put: the driver does not declare MultiSpan")
	assert.Contains(t, summary, "not run: the run: puts' objects are not read back after their access ended")
	assert.Contains(t, summary, "not run: lookup-concurrent: a lookup held inside the store beside a put and a get: the harness has no HoldLookups hook")
}

// TestRunNotesWhatTheCapLeavesOut: under a MaxRowsPerOp of 2 the cases of
// three rows and more are not sent, and the run says so, case by case.
func TestRunNotesWhatTheCapLeavesOut(t *testing.T) {
	h := memHarness(memdrv.Options{MaxRowsPerOp: 2}, false)
	h.Only = []string{"duplicate-key"}
	root := &record{}
	run(root, h)
	require.Empty(t, root.findings())
	assert.True(t, anyContains(root.find("duplicate-key").logged(),
		`not run: the put case "a name again after another": its 3 rows are over MaxRowsPerOp 2, and the binding never sends such a batch`))
	summary := strings.Join(root.logs, "\n")
	for _, dir := range []string{"put", "get"} {
		assert.Contains(t, summary, "not run: duplicate-key: the "+dir+` case "a name again after another": its 3 rows are over MaxRowsPerOp 2`)
		assert.Contains(t, summary, "not run: duplicate-key: the "+dir+` case "a name again in a batch of 10 rows": its 10 rows are over MaxRowsPerOp 2`)
	}
}

// TestRunKeyPrefixNUL: a KeyPrefix with a NUL byte fails Run before any
// check, since no key may hold one.
func TestRunKeyPrefixNUL(t *testing.T) {
	root := &record{}
	run(root, Harness{New: memHarness(memdrv.Options{}, false).New, KeyPrefix: "a\x00b/"})
	assert.Equal(t, []string{`: conformance: Harness.KeyPrefix "a\x00b/" holds a NUL byte, which no key may`}, root.findings())
	assert.Empty(t, root.subs)
}

// TestRunOnly runs one check by name, and refuses a name that is no check.
func TestRunOnly(t *testing.T) {
	root := &record{}
	run(root, Harness{New: memHarness(memdrv.Options{}, false).New, Only: []string{"extents"}})
	require.Empty(t, root.findings())
	require.Len(t, root.subs, 1)
	assert.Equal(t, "extents", root.subs[0].name)

	root = &record{}
	run(root, Harness{New: memHarness(memdrv.Options{}, false).New, Only: []string{"extent"}})
	assert.Equal(t, []string{`: conformance: Harness.Only names "extent", which is no check`}, root.findings())
}

// TestRunHarnessFailures: a harness that cannot build a driver fails
// every check it was asked for, saying so.
func TestRunHarnessFailures(t *testing.T) {
	for _, c := range []struct {
		name string
		new  func() (*Subject, error)
		want string
	}{
		{"error", func() (*Subject, error) { return nil, errors.New("no store today") }, "Harness.New: no store today"},
		{"no subject", func() (*Subject, error) { return nil, nil }, "Harness.New returned no driver"},
		{"no driver", func() (*Subject, error) { return &Subject{}, nil }, "Harness.New returned no driver"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := &record{}
			run(root, Harness{New: c.new, Only: []string{"extents", "held-row"}})
			assert.Equal(t, []string{
				"extents: conformance: " + c.want,
				"held-row/put: conformance: " + c.want,
				"held-row/get: conformance: " + c.want,
			}, root.findings())
		})
	}
	root := &record{}
	run(root, Harness{})
	assert.Equal(t, []string{": conformance: Harness.New is nil"}, root.findings())
}

// TestProbeUnprovableSkips stages a probe row whose access is
// unprovable: the check ends as a skip and keeps the region's memory.
func TestProbeUnprovableSkips(t *testing.T) {
	const prefix = "probe-test/"
	root := &record{}
	run(root, Harness{
		KeyPrefix: prefix,
		Only:      []string{"unregister-revokes"},
		New: func() (*Subject, error) {
			s := memdrv.NewStore()
			d := memdrv.New(s, memdrv.Options{Get: true})
			d.UnprovableGets(suiteKeys{prefix: prefix}.key("unregister-revokes/probe-1"))
			return memSubject(d, d, s), nil
		},
	})
	require.Empty(t, root.findings())
	r := root.find("unregister-revokes")
	require.NotNil(t, r)
	assert.True(t, r.skipped)
	assert.Contains(t, r.skip, "access unprovable")
	assert.True(t, anyContains(r.logged(), "kept region r1"), "logs: %q", r.logged())
}

// TestChecks holds the list of checks to its promises: enough of them,
// unique names, and README.md listing each, in order, with its Proves
// line, and again with its Needs line.
func TestChecks(t *testing.T) {
	checks := Checks()
	require.GreaterOrEqual(t, len(checks), 45)
	seen := map[string]bool{}
	var proves, needs []string
	for _, c := range checks {
		assert.False(t, seen[c.Name], "check %q listed twice", c.Name)
		seen[c.Name] = true
		assert.NotEmpty(t, c.Proves, c.Name)
		assert.NotEmpty(t, c.Needs, c.Name)
		proves = append(proves, c.Name+": "+c.Proves+".")
		needs = append(needs, c.Name+": "+c.Needs+".")
	}
	assert.Equal(t, proves, readmeList(t, "## The checks"))
	assert.Equal(t, needs, readmeList(t, "## What each check needs"))
}

// readmeList returns the entries of the bullet list in README.md's
// section under heading (up to the next "## " heading), "- name: text.",
// each with its wrapped (indented) lines joined.
func readmeList(t *testing.T, heading string) []string {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	lines := strings.Split(string(readme), "\n")
	start := slices.Index(lines, heading)
	require.True(t, start >= 0, "README.md has no section %q", heading)
	var out []string
	for _, line := range lines[start+1:] {
		if strings.HasPrefix(line, "## ") {
			break
		}
		switch {
		case strings.HasPrefix(line, "- "):
			out = append(out, strings.TrimPrefix(line, "- "))
		case strings.HasPrefix(line, "  ") && len(out) > 0:
			out[len(out)-1] += " " + strings.TrimSpace(line)
		}
	}
	require.NotEmpty(t, out, "README.md's section %q lists nothing", heading)
	return out
}

func anyContains(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// TestHungHookFails: a scenario hook that does not return (one stuck on
// a lock of the driver, say) fails the check within Wait, and the check
// keeps every region.
func TestHungHookFails(t *testing.T) {
	stuck := make(chan struct{})
	t.Cleanup(func() { close(stuck) })
	root := &record{}
	run(root, Harness{Wait: time.Second, Only: []string{"get-round-trip"}, New: func() (*Subject, error) {
		s := memdrv.NewStore()
		d := memdrv.New(s, quiet(memdrv.Options{Get: true}))
		sub := memSubject(d, d, s)
		sub.Seed = func(string, []byte) { <-stuck }
		return sub, nil
	}})
	r := root.find("get-round-trip")
	require.NotNil(t, r)
	assert.Equal(t, []string{"get-round-trip: the Seed hook did not return within " + patience.Scaled(time.Second).String()}, r.findings(), "the harness's Wait, as the suite scales it")
	assert.True(t, anyContains(r.logged(), "kept region r1 "), "logs: %q", r.logged())
}
