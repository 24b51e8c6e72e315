package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBenchWithoutAPoolSaysItSkippedFive(t *testing.T) {
	var out, errs bytes.Buffer
	code := run([]string{"bench", "--only", "5"}, &out, &errs)
	assert.Equal(t, 0, code, "stderr: %s", errs.String())
	assert.Contains(t, out.String(), "5. Real pool: skipped: no pool given (--store store.toml, or --mooncake-dir DIR to start one)\n")
	assert.Empty(t, errs.String(), "no progress bar when stderr is not a terminal")
}

func TestBenchLookupTable(t *testing.T) {
	var out, errs bytes.Buffer
	code := run([]string{"bench", "--short", "--reps", "1", "--only", "6"}, &out, &errs)
	require.Equal(t, 0, code, "stderr: %s", errs.String())
	for _, want := range []string{"\n6. Lookup: ", "   memdrv ", "   mooncakedrv, fake SDK ", "stop at first", "every row",
		"   Real pool: skipped: no pool given", "lookup over memdrv, 4096 names, every row: kvshare ns a name asked"} {
		assert.Contains(t, out.String(), want)
	}
	assert.NotContains(t, out.String(), "\n5. Real pool")
}

func TestBenchJSON(t *testing.T) {
	var out, errs bytes.Buffer
	code := run([]string{"bench", "--short", "--reps", "1", "--only", "3,5,6", "--json"}, &out, &errs)
	require.Equal(t, 0, code, "stderr: %s", errs.String())
	var doc map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc), "stdout is one JSON document: %s", out.String())
	assert.Contains(t, doc, "row_cpu")
	assert.Contains(t, doc, "lookup")
	assert.NotContains(t, doc, "settle")
	assert.EqualValues(t, 1, doc["reps"])
	assert.Empty(t, errs.String())
}

func TestBenchCPUProfileAndPlots(t *testing.T) {
	dir := t.TempDir()
	prof, png, svg := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "bench.png"), filepath.Join(dir, "bench.svg")
	var out, errs bytes.Buffer
	code := run([]string{"bench", "--short", "--reps", "1", "--only", "4", "--cpuprofile", prof, "--plot", png + "," + svg}, &out, &errs)
	require.Equal(t, 0, code, "stderr: %s", errs.String())
	assert.Contains(t, out.String(), "4. Publish + fetch through the in-memory store")
	assert.Contains(t, out.String(), "plots: "+png+" "+svg)
	for _, f := range []string{prof, png, svg} {
		st, err := os.Stat(f)
		require.NoError(t, err)
		assert.Positive(t, st.Size(), f)
	}
}

func TestBenchUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"bench", "--only", "10"}, `"10" is not a measurement (1–9)`},
		{[]string{"bench", "--only", "0"}, `"0" is not a measurement (1–9)`},
		{[]string{"bench", "--store", writeStore(t, "[memory]\ncapacity = 0\n")}, "give a [mooncake], [redis] or [disk] file"},
		{[]string{"bench", "--plot", "out.pdf"}, "must end in .svg or .png"},
		{[]string{"bench", "--only", "3,5,6", "--plot", "out.svg"}, "nothing to plot"},
		{[]string{"bench", "--reps", "-1"}, "reps is -1"},
		{[]string{"bench", "--store", mooncakeFile(t), "--mooncake-dir", "/m"}, "not both"},
		{[]string{"bench", "--store", redisFile(t, "127.0.0.1:1"), "--redis-server", "/usr/bin/redis-server"}, "two ways to name a Redis server: give one"},
		{[]string{"bench", "--store", filepath.Join(t.TempDir(), "nosuch.toml")}, "--store: store file "},
		{[]string{"bench", "extra"}, `unexpected argument "extra"`},
	} {
		var out, errs bytes.Buffer
		assert.Equal(t, 2, run(c.args, &out, &errs), "%v", c.args)
		assert.Contains(t, errs.String(), c.msg, "%v", c.args)
		assert.Empty(t, out.String(), "%v: nothing ran", c.args)
	}
}
