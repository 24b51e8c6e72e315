package main

import (
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/hostmem"
)

// The README's example runs, prints what it fetched, and gives back
// every byte it mapped.
func TestTheReadmeExampleRuns(t *testing.T) {
	before := hostmem.Totals().MappedNow
	r, w, err := os.Pipe()
	require.NoError(t, err)
	stdout := os.Stdout
	os.Stdout = w
	main()
	os.Stdout = stdout
	require.NoError(t, w.Close())
	printed, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, "fetched 2 of 2 blocks: \"block 1: its keys and values\"\n", string(printed))
	assert.Equal(t, before, hostmem.Totals().MappedNow)
}
