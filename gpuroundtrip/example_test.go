package gpuroundtrip_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kvshare/kvshare/gpuroundtrip"
)

// A round trip of one request's KV pages between two lenders, over the
// host stand-in and the embedded in-memory store.
func ExampleRun() {
	cfg := gpuroundtrip.Defaults()
	cfg.Layers, cfg.Blocks, cfg.BlockBytes = 4, 16, 4096
	cfg.GPU = gpuroundtrip.GPUNever
	cfg.Logger = slog.New(slog.DiscardHandler)
	rep, err := gpuroundtrip.Run(context.Background(), cfg, nil)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("device:", rep.Device)
	fmt.Println("published:", rep.Publish.Delivered, "blocks; fetched:", rep.Fetch.Delivered)
	fmt.Println("resume bound:", rep.Bound, "of", cfg.Blocks, "blocks")
	fmt.Println("ok:", rep.OK())
	// Output:
	// device: host memory (stand-in for a GPU)
	// published: 64 blocks; fetched: 64
	// resume bound: 16 of 16 blocks
	// ok: true
}
