package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The main job runs through the embedded store, bounded and taken up
// front for its rows, and says so in its first line (with how long
// faulting it in took), and what the store holds at the end.
func TestRoundtripOverTheBoundedStore(t *testing.T) {
	var out, errs bytes.Buffer
	code := run([]string{"roundtrip", "-rows", "16", "-row-kib", "64", "-view-rows", "4"}, &out, &errs)
	assert.Equal(t, 0, code, "stderr: %s", errs.String())
	s := out.String()
	assert.Regexp(t, `^kvshare roundtrip: 16 blocks of 64 KiB through the embedded in-memory store \(1 MiB taken up front in chunks of 64 KiB, [^)]+, faulted in in [^)]+\) \(4 views, 2 workers per driver\)\n`, s)
	assert.Contains(t, s, "check    16/16 rows byte-identical")
	assert.Contains(t, s, "store    16 objects, 1 MiB in 1 MiB of chunks; 0 evicted (0 B), 0 declined\n")
}

// A [memory] store file shapes the embedded store: its capacity,
// chunks and workers, and [blob]'s key prefix; a capacity too small
// for the rows evicts, and the fetch misses what was evicted (the round
// trip fails, saying so); a bad file is refused naming the key.
func TestRoundtripOverAMemoryStoreFile(t *testing.T) {
	var out, errs bytes.Buffer
	good := writeStore(t, "[blob]\nkey_prefix = \"team\"\n[memory]\ncapacity = 2097152\nchunk_bytes = 16384\nworkers = 3\n")
	code := run([]string{"roundtrip", "-rows", "16", "-row-kib", "64", "--store", good}, &out, &errs)
	assert.Equal(t, 0, code, "stderr: %s", errs.String())
	assert.Regexp(t, `^kvshare roundtrip: 16 blocks of 64 KiB through the embedded in-memory store \(2 MiB taken up front in chunks of 16 KiB, base pages, faulted in in [^)]+\) \(1 views, 3 workers per driver\)\n`, out.String())
	assert.Contains(t, out.String(), "keys     team/roundtrip/")

	out.Reset()
	errs.Reset()
	small := writeStore(t, "[memory]\ncapacity = 524288\n")
	code = run([]string{"roundtrip", "-rows", "16", "-row-kib", "64", "--store", small}, &out, &errs)
	assert.Equal(t, 1, code)
	assert.Contains(t, out.String(), "store    8 objects, 512 KiB in 512 KiB of chunks; 8 evicted (512 KiB), 0 declined")
	assert.Contains(t, out.String(), "fetch    8 ready, 8 miss")
	assert.Contains(t, errs.String(), "round trip FAILED")

	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--store", writeStore(t, "[memory]\nchunk_bytes = 4096\n")}, "[memory] capacity: is required"},
		{[]string{"--store", writeStore(t, "[memory]\ncapacity = 1048576\nhuge_pages = \"2M\"\n")}, `[memory] huge_pages: must be one of "none", "2MiB", "1GiB", got "2M"`},
		{[]string{"--store", good, "-workers", "4"}, "set [memory] workers in the store config"},
	} {
		out.Reset()
		errs.Reset()
		assert.Equal(t, 2, run(append([]string{"roundtrip", "-rows", "4"}, c.args...), &out, &errs), "%v", c.args)
		assert.Contains(t, errs.String(), c.msg)
	}
}
