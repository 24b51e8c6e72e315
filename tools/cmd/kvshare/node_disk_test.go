package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/diskdrv"
	"github.com/kvshare/kvshare/patience"
)

// TestNodeCommandDiskStoreFile: with --store naming a disk tier's file
// ([disk]), the node serves the disk tier like any store: two engines
// round-trip through it, the objects land in the directory, and the
// node gives the directory's lock back when it shuts down.
func TestNodeCommandDiskStoreFile(t *testing.T) {
	socket := nodeSocket(t)
	dir := filepath.Join(t.TempDir(), "kv")
	store := writeStore(t, fmt.Sprintf("[blob]\nkey_prefix = \"nodeteam\"\n[disk]\ndir = %q\ncapacity = 0\n", dir))
	r, w := io.Pipe()
	var errs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		defer w.Close()
		code <- nodeCmd(ctx, []string{"--socket", socket, "--store", store}, w, &errs)
	}()
	line, rest := serving(t, r)
	require.Contains(t, line, "the disk tier in "+dir)
	roundTripThroughNode(t, socket)
	cancel()
	require.True(t, patience.For(t).Wait(closedWhen(code)))
	require.Equal(t, 0, <-code, "stderr: %s", errs.String())
	require.Contains(t, rest(), "shut down after 2 sessions")

	s, err := diskdrv.Open(dir, diskdrv.Options{})
	require.NoError(t, err, "the node gave the directory's lock back")
	defer s.Close()
	_, objects := s.Used()
	require.Positive(t, objects, "the engines' rows are on disk")
}
