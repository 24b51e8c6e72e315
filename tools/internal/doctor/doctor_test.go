package doctor

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/patience"
)

// verdicts is every check's verdict, as Report.Find finds it.
func verdicts(t *testing.T, rep Report) map[string]Verdict {
	t.Helper()
	v := map[string]Verdict{}
	for _, c := range checks {
		f, found := rep.Find(c)
		require.True(t, found, "%s is in the report", c)
		v[c] = f.Verdict
	}
	return v
}

// Without Mooncake: every problem among library, environment, master
// and metadata is named in one run, and one line says nothing needing
// them ran.
func TestEveryIndependentProblemIsNamedInOneRun(t *testing.T) {
	library := filepath.Join(t.TempDir(), "lib", "libmooncake_store.so")
	master := closedPort(t)
	path := storeFile(t, config(library, master, "http://"+closedPort(t)+"/metadata"))
	rep := Run(t.Context(), Options{ConfigPath: path, LookupEnv: env(map[string]string{"MC_TCP_PROTO": "1"}), Wait: patience.Wait()})

	assert.True(t, rep.Failed())
	want := []string{CheckConfig, CheckKeyPrefix, CheckLibrary, CheckEnvironment, CheckMaster, CheckMetadata, CheckRest}
	require.Len(t, rep.Findings, len(want))
	for i, f := range rep.Findings {
		assert.Equal(t, want[i], f.Check, "in order")
	}
	assert.Equal(t, map[string]Verdict{
		CheckConfig: OK, CheckKeyPrefix: OK,
		CheckLibrary: Fail, CheckEnvironment: Fail, CheckMaster: Fail, CheckMetadata: Fail,
		CheckClient: Skip, CheckListeners: Skip, CheckPut: Skip, CheckGet: Skip, CheckRemove: Skip, CheckClose: Skip,
	}, verdicts(t, rep))
	f, _ := rep.Find(CheckLibrary)
	assert.Contains(t, f.Detail, library)
	f, _ = rep.Find(CheckEnvironment)
	assert.Contains(t, f.Detail, "MC_TCP_PROTO=1")
	f, _ = rep.Find(CheckMaster)
	assert.Contains(t, f.Detail, master)
	f, _ = rep.Find(CheckClient)
	assert.Contains(t, f.Detail, "a check above failed")
	assert.Equal(t, "the 6 other checks (client, listeners, probe put, probe get, probe remove, client close): not run: a check above failed",
		rep.Findings[len(rep.Findings)-1].Detail)

	var b bytes.Buffer
	rep.Write(&b)
	assert.Contains(t, b.String(), "\nthe rest       skip  the 6 other checks (client, ")
	assert.Contains(t, b.String(), "doctor: 4 of 12 checks FAILED for "+path, "the rest counts as the checks it stands for")
}

func TestOneFailureIsEnough(t *testing.T) {
	// Only the library is wrong: master and metadata answer.
	library := filepath.Join(t.TempDir(), "libmooncake_store.so")
	path := storeFile(t, config(library, listening(t), metadataServer(t)))
	rep := Run(t.Context(), Options{ConfigPath: path, LookupEnv: env(map[string]string{"MC_TCP_BIND_ADDRESS": "127.0.0.1"}), Wait: patience.Wait()})
	assert.True(t, rep.Failed())
	for c, v := range verdicts(t, rep) {
		switch c {
		case CheckLibrary:
			assert.Equal(t, Fail, v)
		case CheckMaster, CheckClient, CheckListeners, CheckPut, CheckGet, CheckRemove, CheckClose:
			assert.Equal(t, Skip, v, c)
		default:
			assert.Equal(t, OK, v, c)
		}
	}
	f, _ := rep.Find(CheckMaster)
	assert.Contains(t, f.Detail, "accepts TCP connections, but no Mooncake master was seen to answer: the client was not opened", "an accept alone is never ok")
}

func TestReportWrite(t *testing.T) {
	rep := Report{File: "store.toml", Findings: []Finding{
		ok(CheckConfig, "fine"),
		warn(CheckLibrary, "not pinned"),
		fail(CheckMaster, "first\nsecond"),
		skip(CheckClient, "not run"),
	}}
	var b bytes.Buffer
	rep.Write(&b)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, 6)
	assert.Equal(t, "config         ok    fine", lines[0])
	assert.Equal(t, "library        warn  not pinned", lines[1])
	assert.Equal(t, "master         FAIL  first", lines[2])
	assert.Equal(t, strings.Repeat(" ", 21)+"second", lines[3], "a detail's later lines stay under its first")
	assert.Equal(t, "client         skip  not run", lines[4])
	assert.Equal(t, "doctor: 1 of 4 checks FAILED for store.toml", lines[5])
	assert.True(t, rep.Failed())

	rep.Findings = rep.Findings[:2]
	assert.False(t, rep.Failed(), "a warning does not fail")
	b.Reset()
	rep.Write(&b)
	assert.Contains(t, b.String(), "doctor: every check passed for store.toml")
}

// skipRest writes one line for the checks left, or the check's own line
// when only one is left.
func TestSkipRest(t *testing.T) {
	r := &run{all: checks[:]}
	for _, c := range checks[:len(checks)-1] {
		r.add(ok(c, "fine"))
	}
	r.skipRest("why")
	assert.Equal(t, skip(CheckClose, "not run: why"), r.Findings[len(r.Findings)-1])

	r = &run{all: checks[:]}
	r.skipRest("why")
	require.Len(t, r.Findings, 1)
	assert.Equal(t, CheckRest, r.Findings[0].Check)
	assert.Equal(t, len(checks), r.checks())
	f, found := r.Find(CheckGet)
	assert.True(t, found)
	assert.Equal(t, Skip, f.Verdict)
	assert.Equal(t, CheckGet, f.Check)
	_, found = r.Find("no such check")
	assert.False(t, found)
}

func TestVerdictNames(t *testing.T) {
	assert.Equal(t, []string{"ok", "warn", "FAIL", "skip", "Verdict(9)"},
		[]string{OK.String(), Warn.String(), Fail.String(), Skip.String(), Verdict(9).String()})
}
