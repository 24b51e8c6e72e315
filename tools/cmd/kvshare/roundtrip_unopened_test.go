package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// resultLine matches a line that reads like what a run moved or found.
var resultLine = regexp.MustCompile(`(?m)^(publish|fetch|lookup|check|lent|store|keys|memory) +|GB/s|rows byte-identical`)

// A store file whose store cannot be opened (a Mooncake library that is
// not there, a Redis server that does not answer, a disk directory that
// cannot be made): the round trip did not happen, so its output holds
// no line of a result, nor the plan of a run; the error comes alone, on
// stderr, naming the cause, and the exit status is not 0.
func TestARoundTripThatCannotStartPrintsItsErrorAlone(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))
	for _, c := range []struct {
		name, store, cause string
	}{
		{"a Mooncake library that is not there", writeStore(t, "[blob]\nkey_prefix = \"k\"\n[mooncake]\nmaster = \"127.0.0.1:1\"\nmetadata_server = \"P2PHANDSHAKE\"\nlocal_hostname = \"127.0.0.1\"\nlibrary = \"/nonexistent/libmooncake_store.so\"\n"),
			"/nonexistent/libmooncake_store.so"},
		{"a Redis server that does not answer", redisFile(t, "127.0.0.1:1"), "127.0.0.1:1"},
		{"a disk directory that cannot be made", writeStore(t, fmt.Sprintf("[disk]\ndir = %q\ncapacity = 0\n", filepath.Join(notDir, "kv"))), notDir},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			code := run([]string{"roundtrip", "-rows", "4", "-row-kib", "4", "--store", c.store}, &out, &errs)
			assert.NotEqual(t, 0, code)
			assert.NotRegexp(t, resultLine, out.String(), "no result of a run that did not happen")
			assert.Empty(t, out.String(), "nothing but the error")
			lines := strings.Split(strings.TrimSpace(errs.String()), "\n")
			assert.True(t, strings.HasPrefix(lines[0], "kvshare: "), "the error comes first: %q", errs.String())
			assert.Contains(t, errs.String(), c.cause)
		})
	}
}
