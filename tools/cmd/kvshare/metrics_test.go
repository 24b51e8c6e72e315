package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
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
