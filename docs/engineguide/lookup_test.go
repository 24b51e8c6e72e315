package engineguide_test

import (
	"context"
	"fmt"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/lender"
	"github.com/kvshare/kvshare/memdrv"
)

// guide:lookup
// plan asks which of v's blocks the store holds, lending no memory, and
// cuts v in two: the blocks to fetch (the least Present prefix over the
// layers) and the blocks to compute. mayFault says a block read Present
// may still fault when fetched (Capabilities.PresenceFromIndex: Present
// is what the store's index lists, not what a fetch will read).
func plan(ctx context.Context, l *lender.Lender, v contract.View) (fetch, compute contract.View, mayFault bool, err error) {
	found, err := l.Lookup(ctx, v, binding.LookupOptions{})
	if err != nil {
		return contract.View{}, v, false, err // binding.ErrNoLookup: the driver cannot tell; compute it all
	}
	return v.Cut(found.Bound), v.Rest(found.Bound), l.Regions().Capabilities().PresenceFromIndex, nil
}

// guide:end

// One lender publishes two blocks of a request; another asks which of
// the request's three blocks the store holds, fetches those and
// computes the third.
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
	view := requestView(blockHashes(tokens, blockTokens), layers, maxBlocks)
	published, err := publisher.Publish(view.Cut(2), nil)
	if err != nil {
		panic(err)
	}
	if _, err := contract.Settle(ctx, published); err != nil {
		panic(err)
	}

	fetch, compute, mayFault, err := plan(ctx, fetcher, view)
	if err != nil {
		panic(err)
	}
	fmt.Println("fetch", fetch.Rows(), "rows, compute", compute.Rows(), "- a Present block may still fault:", mayFault)
	fetched, err := fetcher.Fetch(fetch, nil)
	if err != nil {
		panic(err)
	}
	out, err := contract.Settle(ctx, fetched)
	if err != nil {
		panic(err)
	}
	fmt.Println("fetched rows:", out.Count(contract.Ready), "resume at block", fetch.ResumeBound(out), "fault:", out.Fault)
	fmt.Println("publisher closed:", publisher.Close(ctx))
	fmt.Println("fetcher closed:", fetcher.Close(ctx))
	// Output:
	// fetch 4 rows, compute 2 - a Present block may still fault: false
	// fetched rows: 4 resume at block 2 fault: <nil>
	// publisher closed: <nil>
	// fetcher closed: <nil>
}
