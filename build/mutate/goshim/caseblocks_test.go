package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const verdictSource = `package m

func verdict(code int) string {
	switch code {
	case 0:
		return "ready"
	case -704:
		return "miss"
	case -703:
		return "not ready"
	}
	return "fault"
}
`

// profileOf runs the fixture's test (calling verdict with each code)
// under a count coverage profile and returns the profile's path.
func profileOf(t *testing.T, codes string) (profile, dir string) {
	t.Helper()
	dir = t.TempDir()
	files := map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.26\n",
		"v.go":      verdictSource,
		"v_test.go": "package m\n\nimport \"testing\"\n\nfunc TestV(t *testing.T) {\n\tfor _, c := range []int{" + codes + "} {\n\t\t_ = verdict(c)\n\t}\n}\n",
	}
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	profile = filepath.Join(dir, "cover.out")
	cmd := exec.Command("go", "test", "-covermode=count", "-coverprofile="+profile, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return profile, dir
}

// added returns the lines addCaseBlocks appended for the case lists of
// verdictSource, as "line.col".
func added(t *testing.T, codes string) []string {
	t.Helper()
	profile, dir := profileOf(t, codes)
	before, err := os.ReadFile(profile)
	require.NoError(t, err)
	require.NoError(t, addCaseBlocks(profile, dir))
	after, err := os.ReadFile(profile)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(after), string(before)), "the profile is appended to, never rewritten")
	var starts []string
	for _, l := range strings.Split(strings.TrimSpace(strings.TrimPrefix(string(after), string(before))), "\n") {
		if l == "" {
			continue
		}
		_, rest, _ := strings.Cut(l, ":")
		from, _, _ := strings.Cut(rest, ",")
		starts = append(starts, from)
		assert.True(t, strings.HasSuffix(l, " 0 1"), "an added block counts as run once: %q", l)
	}
	return starts
}

// A case list counts as evaluated when its clause or a later one ran, or
// when an execution matched none.
func TestCaseListsThatRanAreCovered(t *testing.T) {
	// The case lines of verdictSource: 5, 7, 9 (tab-indented: column 2).
	assert.Equal(t, []string{"5.2"}, added(t, "0"), "only the first list is evaluated when it matches")
	assert.Equal(t, []string{"5.2", "7.2"}, added(t, "-704"), "a later clause ran: the lists before it were evaluated too")
	assert.Equal(t, []string{"5.2", "7.2", "9.2"}, added(t, "-1"), "no clause matched: every list was evaluated")
}

func TestASwitchThatNeverRanAddsNothing(t *testing.T) {
	profile, dir := profileOf(t, "")
	before, err := os.ReadFile(profile)
	require.NoError(t, err)
	require.NoError(t, addCaseBlocks(profile, dir))
	after, err := os.ReadFile(profile)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
}

func TestABadProfileIsRefused(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n"), 0o644))
	profile := filepath.Join(dir, "cover.out")
	require.NoError(t, os.WriteFile(profile, []byte("mode: count\nexample.com/m/v.go:garbage\n"), 0o644))
	assert.ErrorContains(t, addCaseBlocks(profile, dir), "bad line")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("go 1.26\n"), 0o644))
	assert.ErrorContains(t, addCaseBlocks(profile, dir), "names no module")
}
