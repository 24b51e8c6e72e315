package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A soak whose store never answers submits nothing: it prints its plan
// and the error, never a report of zeros that reads like a result.
func TestASoakThatCannotStartPrintsNoReport(t *testing.T) {
	var out, errs bytes.Buffer
	code := run([]string{"soak", "--duration", "1s", "--store", redisFile(t, "127.0.0.1:1")}, &out, &errs)
	assert.Equal(t, 1, code)
	assert.NotContains(t, out.String(), "publishes", "no report of a soak that never submitted")
	assert.NotRegexp(t, resultLine, out.String())
	assert.True(t, strings.HasPrefix(errs.String(), "kvshare: soak FAILED before its first attempt: "), "%q", errs.String())
	assert.Contains(t, errs.String(), "127.0.0.1:1")
}
