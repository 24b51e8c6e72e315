package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRoundtripCommand(t *testing.T) {
	var out, errs bytes.Buffer
	code := run([]string{"roundtrip", "-rows", "20", "-row-kib", "8", "-view-rows", "6", "-workers", "1"}, &out, &errs)
	assert.Equal(t, 0, code, "stderr: %s", errs.String())
	s := out.String()
	assert.Contains(t, s, "20 blocks of 8 KiB")
	assert.Contains(t, s, "publish  20 ready")
	assert.Contains(t, s, "fetch    20 ready")
	assert.Contains(t, s, "check    20/20 rows byte-identical")
	assert.Contains(t, s, "lent     0 rows, 0 B left")
	assert.NotContains(t, s, "\r", "no progress line when stdout is not a terminal")
}

func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 2, "usage"},
		{[]string{"nosuch"}, 2, `unknown command "nosuch"`},
		{[]string{"roundtrip", "-rows", "0"}, 2, "rows is 0"},
		{[]string{"roundtrip", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"roundtrip", "-bogus"}, 2, "bogus"},
		{[]string{"roundtrip", "--floor"}, 2, "--floor is the raw floor of a Mooncake pool"},
		{[]string{"roundtrip", "--floor", "--node"}, 2, "--floor measures the main job over a Mooncake pool, not --node or --gpu"},
		{[]string{"roundtrip", "--floor", "--gpu"}, 2, "not --node or --gpu"},
	} {
		var out, errs bytes.Buffer
		assert.Equal(t, c.code, run(c.args, &out, &errs), "%v", c.args)
		assert.Contains(t, errs.String(), c.msg, "%v", c.args)
	}
}
