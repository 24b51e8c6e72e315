package engineguide_test

import (
	"context"
	"fmt"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
)

// A block missing in one layer bounds the whole request: Prefix counts
// the first layer whole, the resume bound does not; and each row's
// status says what to do about it.
func Example_resumeBound() {
	const layers, maxBlocks, blockTokens = 2, 4, 16
	ctx := context.Background()
	store := memdrv.NewStore()
	cfg := binding.Config{KeyPrefix: "engine"}
	publisher, err := lend(ctx, memdrv.New(store, memdrv.Options{}), cfg, layers*maxBlocks, 4096)
	if err != nil {
		panic(err)
	}
	fetcher, err := lend(ctx, memdrv.New(store, memdrv.Options{}), cfg, layers*maxBlocks, 4096)
	if err != nil {
		panic(err)
	}
	tokens := make([]int32, 3*blockTokens)
	hashes := blockHashes(tokens, blockTokens)
	view := requestView(hashes, layers, maxBlocks)
	published, err := publisher.Backend.Publish(view, nil)
	if err != nil {
		panic(err)
	}
	<-published.Done()

	// Layer 1's block 1 is evicted from the store.
	stem, err := keys.NewStem("engine")
	if err != nil {
		panic(err)
	}
	key, err := stem.Key(blockName(hashes[1], 1))
	if err != nil {
		panic(err)
	}
	store.Delete(key)

	fetched, err := fetcher.Backend.Fetch(view, nil)
	if err != nil {
		panic(err)
	}
	<-fetched.Done()
	out, _ := fetched.Outcome()
	fmt.Println("delivered:", out.Delivered)
	fmt.Println("rows:", out.Rows)
	fmt.Println("Prefix():", out.Prefix())
	fmt.Println("resume bound:", view.ResumeBound(out))
	fmt.Println("fault:", out.Fault) // a miss is no fault
	fmt.Println("layer 1, block 1:", nextStep(out.Rows[len(hashes)+1]))
	fmt.Println(publisher.Close(ctx), fetcher.Close(ctx))
	// Output:
	// delivered: [true true true true false true]
	// rows: [ready ready ready ready miss ready]
	// Prefix(): 4
	// resume bound: 1
	// fault: <nil>
	// layer 1, block 1: compute it: the store does not have it
	// <nil> <nil>
}
