package doctor

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Without Mooncake: every problem among library, environment, master
// and metadata is named in one run, and nothing needing them runs.
func TestEveryIndependentProblemIsNamedInOneRun(t *testing.T) {
	library := filepath.Join(t.TempDir(), "lib", "libmooncake_store.so")
	master := closedPort(t)
	path := storeFile(t, config(library, master, "http://"+closedPort(t)+"/metadata"))
	rep := Run(t.Context(), Options{ConfigPath: path, LookupEnv: env(map[string]string{"MC_TCP_PROTO": "1"}), Wait: 5 * time.Second})

	require.Len(t, rep.Findings, len(checks))
	assert.True(t, rep.Failed())
	verdicts := map[string]Verdict{}
	for i, f := range rep.Findings {
		assert.Equal(t, checks[i], f.Check, "in order")
		verdicts[f.Check] = f.Verdict
	}
	assert.Equal(t, map[string]Verdict{
		CheckConfig: OK, CheckKeyPrefix: OK,
		CheckLibrary: Fail, CheckEnvironment: Fail, CheckMaster: Fail, CheckMetadata: Fail,
		CheckClient: Skip, CheckPut: Skip, CheckGet: Skip, CheckRemove: Skip, CheckClose: Skip,
	}, verdicts)
	f, _ := rep.Find(CheckLibrary)
	assert.Contains(t, f.Detail, library)
	f, _ = rep.Find(CheckEnvironment)
	assert.Contains(t, f.Detail, "MC_TCP_PROTO=1")
	f, _ = rep.Find(CheckMaster)
	assert.Contains(t, f.Detail, master)
	f, _ = rep.Find(CheckClient)
	assert.Contains(t, f.Detail, "a check above failed")
}

func TestOneFailureIsEnough(t *testing.T) {
	// Only the library is wrong: master and metadata answer.
	library := filepath.Join(t.TempDir(), "libmooncake_store.so")
	path := storeFile(t, config(library, listening(t), metadataServer(t)))
	rep := Run(t.Context(), Options{ConfigPath: path, LookupEnv: noEnv, Wait: 5 * time.Second})
	assert.True(t, rep.Failed())
	for _, f := range rep.Findings {
		switch f.Check {
		case CheckLibrary:
			assert.Equal(t, Fail, f.Verdict)
		case CheckMaster:
			assert.NotEqual(t, Fail, f.Verdict, f.Detail) // Warn on an ephemeral port
		case CheckClient, CheckPut, CheckGet, CheckRemove, CheckClose:
			assert.Equal(t, Skip, f.Verdict, f.Check)
		default:
			assert.Equal(t, OK, f.Verdict, "%s: %s", f.Check, f.Detail)
		}
	}
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

func TestVerdictNames(t *testing.T) {
	assert.Equal(t, []string{"ok", "warn", "FAIL", "skip", "Verdict(9)"},
		[]string{OK.String(), Warn.String(), Fail.String(), Skip.String(), Verdict(9).String()})
}
