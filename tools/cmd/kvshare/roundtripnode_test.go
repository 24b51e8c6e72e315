package main

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/patience"
)

// asKvshare, set in a test's environment, makes the test binary started
// again behave as the kvshare binary: `roundtrip --node` re-executes
// itself (os.Executable) as its engine processes, which under `go test`
// is this binary.
const asKvshare = "KVSHARE_TEST_AS_KVSHARE"

func TestMain(m *testing.M) {
	if os.Getenv(asKvshare) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// `kvshare roundtrip --node`: a node started for the run, two engine
// processes of their own (neither this process, nor each other) — the
// publisher's rows all Ready, the fetcher's lookup finds every row
// present, fetches every one and finds every byte as published; both
// lends come back and the node holds nothing; exit status 0.
func TestRoundtripThroughANodeWithTwoEngineProcesses(t *testing.T) {
	t.Setenv(asKvshare, "1")
	var out, errs bytes.Buffer
	// The run's bound (the node's and both engines') from the one setting.
	bound := (3 * patience.Wait()).String()
	code := run([]string{"roundtrip", "--node", "--rows", "96", "--row-kib", "16", "--view-rows", "32", "--timeout", bound}, &out, &errs)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errs.String())
	s := out.String()
	assert.Contains(t, s, "publish  96 ready; 1536 KiB")
	assert.Contains(t, s, "lookup   96 present of 96 asked, bound 96 (3 lookups")
	assert.Contains(t, s, "fetch    96 ready; 1536 KiB")
	assert.Contains(t, s, "check    96/96 rows byte-identical")
	assert.Contains(t, s, "lent     both lends returned and unmapped; the node holds nothing")

	pids := map[int]bool{}
	for _, m := range regexp.MustCompile(`engine pid (\d+)`).FindAllStringSubmatch(s, -1) {
		pid, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		pids[pid] = true
	}
	assert.Len(t, pids, 2, "the publisher and the fetcher are two processes: %s", s)
	assert.NotContains(t, pids, os.Getpid(), "neither engine is the node's process")
}

// A round trip through a node whose publisher's engine never did its
// part (here its process is not even started: the run's bound is over
// before it) did not happen: its output holds no line of a result, nor
// the plan of a run; the error comes first, on stderr, and the exit
// status is 1.
func TestARoundTripThroughANodeThatCannotStartPrintsItsErrorAlone(t *testing.T) {
	var out, errs bytes.Buffer
	code := run([]string{"roundtrip", "--node", "--rows", "4", "--row-kib", "4", "--timeout", "1ns"}, &out, &errs)
	assert.Equal(t, 1, code)
	assert.NotRegexp(t, resultLine, out.String(), "no result of a run that did not happen")
	assert.Empty(t, out.String(), "nothing but the error")
	assert.Regexp(t, `^kvshare: the publish engine process: `, errs.String(), "the error comes first")
	assert.NotContains(t, errs.String(), "lent ", "the node kept nothing, and no lend is claimed")
}

// Flags that name another store, or the GPU, do not go with --node:
// exit status 2 and a line naming the flag.
func TestRoundtripThroughANodeRefusesOtherStores(t *testing.T) {
	for _, args := range [][]string{
		{"--store", "store.toml"},
		{"--redis-server", "redis-server"},
		{"--mooncake-dir", "/m"},
		{"--gpu"},
		{"--metrics", "127.0.0.1:0"},
	} {
		var out, errs bytes.Buffer
		code := run(append([]string{"roundtrip", "--node"}, args...), &out, &errs)
		assert.Equal(t, 2, code, "%v", args)
		assert.Contains(t, errs.String(), args[0]+" does not go with --node", "%v", args)
	}
	var out, errs bytes.Buffer
	assert.Equal(t, 2, run([]string{"roundtrip", "--node", "--rows", "0"}, &out, &errs))
	assert.Contains(t, errs.String(), "rows")
}

// The engine subcommand alone: no socket is bad usage; a socket nobody
// serves fails with exit status 1.
func TestEngineProcessUsage(t *testing.T) {
	var out, errs bytes.Buffer
	assert.Equal(t, 2, run([]string{engineCommand, "--role", "publish"}, &out, &errs))
	assert.Contains(t, errs.String(), "--socket PATH is required")
	errs.Reset()
	assert.Equal(t, 1, run([]string{engineCommand, "--role", "publish", "--socket", nodeSocket(t), "--rows", "4", "--row-bytes", "4096", "--timeout", patience.Wait().String()}, &out, &errs))
	assert.Contains(t, errs.String(), "kvshare "+engineCommand)
	assert.Empty(t, out.String())
}
