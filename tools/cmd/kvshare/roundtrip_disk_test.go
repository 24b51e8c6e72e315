package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A [disk] store file runs the round trip through the disk tier in the
// directory it names, and says so; the objects persist, so a second run
// over the same directory finds them; a bad file is refused naming the
// key.
func TestRoundtripOverADiskStoreFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kv")
	good := writeStore(t, fmt.Sprintf("[blob]\nkey_prefix = \"disk\"\n[disk]\ndir = %q\ncapacity = 0\nworkers = 3\n", dir))
	for range 2 {
		var out, errs bytes.Buffer
		code := run([]string{"roundtrip", "-rows", "16", "-row-kib", "64", "--store", good}, &out, &errs)
		assert.Equal(t, 0, code, "stderr: %s", errs.String())
		assert.Regexp(t, `^kvshare roundtrip: 16 blocks of 64 KiB through the disk tier in `+dir+` \(`, out.String())
		assert.Contains(t, out.String(), "check    16/16 rows byte-identical")
	}

	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--store", writeStore(t, "[disk]\ncapacity = 0\n")}, "[disk] dir: is required"},
		{[]string{"--store", writeStore(t, "[disk]\ndir = \"kv\"\ncapacity = 0\n")}, `[disk] dir: must be an absolute path, got "kv"`},
		{[]string{"--store", writeStore(t, "[disk]\ndir = \"/kv\"\ncapacity = 0\n[memory]\ncapacity = 0\n")}, "holds both [disk] (the disk tier) and [memory]"},
	} {
		var out, errs bytes.Buffer
		assert.Equal(t, 2, run(append([]string{"roundtrip", "-rows", "4"}, c.args...), &out, &errs), "%v", c.args)
		assert.Contains(t, errs.String(), c.msg)
	}
}
