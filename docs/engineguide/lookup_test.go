package engineguide_test

import (
	"context"
	"fmt"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// guide:lookup
// blocksHeld asks which of v's rows the store holds, lending no memory,
// and returns how many leading blocks of every layer to fetch (the least
// Present prefix over the groups), and whether a block read Present may
// still fault when fetched: with Capabilities.PresenceFromIndex, Present
// says what the store's index lists, not that the fetch will read it.
func blocksHeld(ctx context.Context, b *binding.Backend, v contract.View) (bound int, mayFault bool, err error) {
	res, err := b.Lookup(ctx, v, binding.LookupOptions{})
	if err != nil {
		return 0, false, err // binding.ErrNoLookup: the driver cannot tell
	}
	return res.Bound, b.Regions().Capabilities().PresenceFromIndex, nil
}

// guide:end

// One lender publishes two blocks of a request; another asks which of
// the request's three blocks the store holds, then fetches those.
func Example_lookup() {
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
	tokens := make([]int32, 3*blockTokens)
	for i := range tokens {
		tokens[i] = int32(2000 + i)
	}
	hashes := blockHashes(tokens, blockTokens)
	published, err := publisher.backend.Publish(requestView(hashes[:2], layers, maxBlocks), nil)
	if err != nil {
		panic(err)
	}
	if _, err := published.Wait(ctx); err != nil {
		panic(err)
	}

	bound, mayFault, err := blocksHeld(ctx, fetcher.backend, requestView(hashes, layers, maxBlocks))
	if err != nil {
		panic(err)
	}
	fmt.Println("held:", bound, "blocks of", len(hashes), "- a Present block may still fault:", mayFault)
	fetched, err := fetcher.backend.Fetch(requestView(hashes[:bound], layers, maxBlocks), nil)
	if err != nil {
		panic(err)
	}
	out, err := fetched.Wait(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("fetched rows:", out.Prefix(), "fault:", out.Fault)

	<-published.Done()
	<-fetched.Done()
	fmt.Println("publisher closed:", publisher.close(ctx))
	fmt.Println("fetcher closed:", fetcher.close(ctx))
	// Output:
	// held: 2 blocks of 3 - a Present block may still fault: false
	// fetched rows: 4 fault: <nil>
	// publisher closed: <nil>
	// fetcher closed: <nil>
}
