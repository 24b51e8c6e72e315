package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/kvshare/kvshare/gpuroundtrip"
	"github.com/kvshare/kvshare/tools/internal/roundtrip"
)

// gpuRoundTrip runs the main job through two lenders' device pages
// (gpuroundtrip): on a GPU when one is there, else over the host-memory
// stand-in, saying so. store is the round trip's store (nil: the embedded
// in-memory store).
func gpuRoundTrip(ctx context.Context, store roundtrip.Store, keyPrefix string, stdout, stderr io.Writer) int {
	cfg := gpuroundtrip.Defaults()
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if store != nil {
		cfg.Store = store
	}
	if keyPrefix != "" {
		cfg.KeyPrefix = keyPrefix
	}
	rep, err := gpuroundtrip.Run(ctx, cfg, nil)
	if err != nil && rep.Publish.Rows == 0 && rep.Fetch.Rows == 0 {
		fmt.Fprintln(stderr, "kvshare:", err) // nothing moved: no result to print beside it
		return 1
	}
	if rep.OnGPU {
		fmt.Fprintf(stdout, "device   %s\n", rep.Device)
	} else {
		fmt.Fprintf(stdout, "device   no GPU: %s; the pages live in host memory (the stand-in)\n", rep.NoGPU)
	}
	fmt.Fprintf(stdout, "request  %d layers × %d blocks of %s through %s\n", cfg.Layers, cfg.Blocks, size(cfg.BlockBytes), rep.Store)
	for _, p := range []struct {
		name string
		ph   gpuroundtrip.Phase
	}{{"publish", rep.Publish}, {"fetch", rep.Fetch}} {
		fmt.Fprintf(stdout, "%-8s %d/%d blocks, %.2f GB/s (copy %.2f GB/s, store %.2f GB/s)\n",
			p.name, p.ph.Delivered, p.ph.Rows, p.ph.GBps(), p.ph.CopyGBps(), p.ph.StoreGBps())
	}
	fmt.Fprintf(stdout, "resume   bound %d of %d blocks; %d pages differ; freed %v\n", rep.Bound, cfg.Blocks, rep.Mismatches, rep.Freed)
	if err != nil {
		fmt.Fprintln(stderr, "kvshare:", err)
		return 1
	}
	if !rep.OK() {
		fmt.Fprintln(stderr, "kvshare: GPU round trip FAILED")
		return 1
	}
	return 0
}
