package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --metrics serves on the address given and says where; an address it
// cannot listen on is a usage error. (What it serves is checked against
// Stats() in package metrics.)
func TestRoundtripMetricsFlag(t *testing.T) {
	var out, errs bytes.Buffer
	code := run([]string{"roundtrip", "-rows", "8", "-row-kib", "4", "-metrics", "127.0.0.1:0"}, &out, &errs)
	assert.Equal(t, 0, code, "stderr: %s", errs.String())
	assert.Regexp(t, `(?m)^metrics  http://127\.0\.0\.1:\d+/metrics `, out.String())
	assert.Contains(t, out.String(), "check    8/8 rows byte-identical")

	out.Reset()
	errs.Reset()
	code = run([]string{"roundtrip", "-rows", "8", "-metrics", "127.0.0.1:no-port"}, &out, &errs)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs.String(), "--metrics")
}

// kvshare bench --metrics says where it serves on stderr, so that
// --json keeps stdout one JSON document.
func TestBenchMetricsFlag(t *testing.T) {
	var out, errs bytes.Buffer
	code := run([]string{"bench", "--short", "--reps", "1", "--only", "3", "--json", "--metrics", "127.0.0.1:0"}, &out, &errs)
	require.Equal(t, 0, code, "stderr: %s", errs.String())
	var doc map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc), "stdout is one JSON document: %s", out.String())
	assert.Regexp(t, `(?m)^metrics  http://127\.0\.0\.1:\d+/metrics `, errs.String())

	errs.Reset()
	assert.Equal(t, 2, run([]string{"bench", "--only", "5", "--metrics", "nohost:-1"}, &out, &errs))
	assert.Contains(t, errs.String(), "--metrics")
}
