package engineguide_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
)

// guide:walkthrough
// Two lenders in one process share an in-memory store: one publishes a
// request's KV blocks, the other fetches them into its own slots.
func Example_publishAndFetch() {
	const layers, maxBlocks, blockTokens, slotBytes = 2, 4, 16, 4096
	ctx := context.Background()
	store := memdrv.NewStore()
	cfg := binding.Config{KeyPrefix: "engine"}
	publisher, err := lend(ctx, memdrv.New(store, memdrv.Options{}), cfg, layers*maxBlocks, slotBytes)
	if err != nil {
		panic(err)
	}
	fetcher, err := lend(ctx, memdrv.New(store, memdrv.Options{}), cfg, layers*maxBlocks, slotBytes)
	if err != nil {
		panic(err)
	}

	tokens := make([]int32, 3*blockTokens) // three full blocks
	for i := range tokens {
		tokens[i] = int32(1000 + i)
	}
	view := requestView(blockHashes(tokens, blockTokens), layers, maxBlocks)
	// The engine copies each block's KV pages into its slot (here, a
	// pattern: the block's name).
	for _, g := range view.Groups {
		for i, slot := range g.Slots {
			copy(publisher.mem.Slot(0, int(slot)), g.Names[i])
		}
	}

	published, err := publisher.backend.Publish(view, nil)
	if err != nil {
		panic(err) // refused: nothing reached the store
	}
	out, err := published.Wait(ctx) // the outcome; Done() says when the slots are free again
	if err != nil {
		panic(err)
	}
	fmt.Println("published rows:", out.Prefix(), "of", view.Rows(), "fault:", out.Fault)

	fetched, err := fetcher.backend.Fetch(view, nil)
	if err != nil {
		panic(err)
	}
	<-fetched.Done() // quiesced: the fetcher may read these slots
	out, _ = fetched.Outcome()
	bound := view.ResumeBound(out)
	fmt.Println("fetched: resume at block", bound, "fault:", out.Fault)
	same := true
	for _, g := range view.Groups {
		for _, slot := range g.Slots[:bound] {
			same = same && bytes.Equal(publisher.mem.Slot(0, int(slot)), fetcher.mem.Slot(0, int(slot)))
		}
	}
	fmt.Println("bytes equal:", same)

	<-published.Done()
	fmt.Println("publisher closed:", publisher.close(ctx))
	fmt.Println("fetcher closed:", fetcher.close(ctx))
	// Output:
	// published rows: 6 of 6 fault: <nil>
	// fetched: resume at block 3 fault: <nil>
	// bytes equal: true
	// publisher closed: <nil>
	// fetcher closed: <nil>
}

// guide:end

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
	published, err := publisher.backend.Publish(view, nil)
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

	fetched, err := fetcher.backend.Fetch(view, nil)
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
	fmt.Println(publisher.close(ctx), fetcher.close(ctx))
	// Output:
	// delivered: [true true true true false true]
	// rows: [ready ready ready ready miss ready]
	// Prefix(): 4
	// resume bound: 1
	// fault: <nil>
	// layer 1, block 1: compute it: the store does not have it
	// <nil> <nil>
}
