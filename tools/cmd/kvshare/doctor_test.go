package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDoctorUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"doctor"}, "--store is required"},
		{[]string{"doctor"}, "or --node SOCKET"},
		{[]string{"doctor", "--store", "a.toml", "extra"}, `unexpected argument "extra"`},
		{[]string{"doctor", "--bogus"}, "bogus"},
	} {
		var out, errs bytes.Buffer
		assert.Equal(t, 2, run(c.args, &out, &errs), "%v", c.args)
		assert.Contains(t, errs.String(), c.msg, "%v", c.args)
	}
}

func TestDoctorRefusedConfigExitsOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.toml")
	require.NoError(t, os.WriteFile(path, []byte("[mooncake]\nmastr = \"127.0.0.1:25151\"\n"), 0o644))
	var out, errs bytes.Buffer
	assert.Equal(t, 1, run([]string{"doctor", "--store", path}, &out, &errs), "stderr: %s", errs.String())
	s := out.String()
	assert.Contains(t, s, "kvshare doctor: "+path)
	assert.Contains(t, s, "config         FAIL")
	assert.Contains(t, s, "[mooncake] mastr: unknown key")
	assert.Contains(t, s, "the rest       skip  the 11 other checks (key prefix, library, environment, master, metadata, client, listeners, probe put, probe get, probe remove, client close): not run: the config was refused")
	assert.Contains(t, s, "checks FAILED for "+path)
	lines := 0
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if !strings.HasPrefix(l, " ") { // a detail's later lines are indented
			lines++
		}
	}
	assert.Equal(t, 1+1+1+1, lines, "header, the config, one line for the checks skipped, outcome")
}

func TestRoundtripStoreErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "store.toml")
	require.NoError(t, os.WriteFile(bad, []byte("[mooncake]\nmaster = \"http://a:1\"\n"), 0o644))
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"roundtrip", "--store", bad}, bad + ": [mooncake] master: must be host:port, not a URL"},
		{[]string{"roundtrip", "--store", filepath.Join(t.TempDir(), "nosuch.toml")}, "no such file"},
		{[]string{"roundtrip", "--store", bad, "-workers", "3"}, "with --store, set [mooncake] workers"},
	} {
		var out, errs bytes.Buffer
		assert.Equal(t, 2, run(c.args, &out, &errs), "%v", c.args)
		assert.Contains(t, errs.String(), c.msg, "%v", c.args)
		assert.Empty(t, out.String(), "nothing ran")
	}
}

// A store file that is not there is said to be missing, first, naming
// its path; one whose only section is misspelt is refused naming that
// section, the store section it is likely meant for and every store
// section: by the round trip (on stderr, exit status 2) and by the
// doctor (its config check).
func TestAStoreFileMissingOrMisspeltIsSaidPlainly(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nosuch.toml")
	misspelt := writeStore(t, "[mooncak]\nmaster = \"127.0.0.1:1\"\n")
	stores := []string{"[mooncake]", "[redis]", "[memory]", "[disk]"}
	for _, c := range []struct {
		name, store, lead string
		want              []string
	}{
		{"missing", missing, "store file " + missing + " does not exist", nil},
		{"misspelt", misspelt, "", append([]string{misspelt, "[mooncak] (did you mean [mooncake]?)"}, stores...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			assert.Equal(t, 2, run([]string{"roundtrip", "--store", c.store}, &out, &errs))
			assert.Empty(t, out.String())
			assert.True(t, strings.HasPrefix(errs.String(), "kvshare: "+c.lead), "%q", errs.String())
			for _, w := range c.want {
				assert.Contains(t, errs.String(), w)
			}

			out.Reset()
			errs.Reset()
			assert.Equal(t, 1, run([]string{"doctor", "--store", c.store}, &out, &errs))
			line := regexp.MustCompile(`(?m)^config +FAIL +(.*)$`).FindStringSubmatch(out.String())
			require.Len(t, line, 2, "a config line: %s", out.String())
			assert.True(t, strings.HasPrefix(line[1], c.lead), "%q", line[1])
			for _, w := range c.want {
				assert.Contains(t, line[1], w)
			}
		})
	}
}
