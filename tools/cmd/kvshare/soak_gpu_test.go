package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSoakCommand(t *testing.T) {
	var out, errs bytes.Buffer
	code := run([]string{"soak", "-duration", "1s", "-seed", "7", "-lenders", "2"}, &out, &errs)
	assert.Equal(t, 0, code, "stderr: %s", errs.String())
	s := out.String()
	// The embedded store, bounded (half the names' bytes) and taken up
	// front, says so in the first line, and what it evicted at the end.
	assert.Regexp(t, `^kvshare soak: 2 lenders over the embedded in-memory store \(16 MiB taken up front in chunks of 16 KiB, [^)]+, faulted in in [^)]+\) for 1s, seed 7\n`, s)
	assert.Contains(t, s, "the store evicted")
	assert.Contains(t, s, "byte for byte")
	assert.Contains(t, s, "2 regions freed")
}

func TestSoakUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"soak", "-lenders", "0"}, "lenders is 0"},
		{[]string{"soak", "extra"}, `unexpected argument "extra"`},
		{[]string{"soak", "--store", "a.toml", "--mooncake-dir", "/x"}, "give one"},
	} {
		var out, errs bytes.Buffer
		assert.Equal(t, 2, run(c.args, &out, &errs), "%v", c.args)
		assert.Contains(t, errs.String(), c.msg, "%v", c.args)
	}
}

// Without a GPU the round trip runs over the host stand-in and says so.
func TestRoundtripGPUSaysWhereThePagesLive(t *testing.T) {
	var out, errs bytes.Buffer
	code := run([]string{"roundtrip", "--gpu"}, &out, &errs)
	assert.Equal(t, 0, code, "stderr: %s", errs.String())
	s := out.String()
	if bytes.Contains(out.Bytes(), []byte("device   no GPU")) {
		assert.Contains(t, s, "the pages live in host memory")
	}
	assert.Contains(t, s, "publish  1024/1024 blocks")
	assert.Contains(t, s, "fetch    1024/1024 blocks")
	assert.Contains(t, s, "0 pages differ; freed true")
}
