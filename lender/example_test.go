package lender_test

import (
	"context"
	"fmt"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/lender"
	"github.com/kvshare/kvshare/memdrv"
)

// One lender publishes a request's blocks; another looks them up and
// fetches what the store holds.
func Example() {
	ctx := context.Background()
	store := memdrv.NewStore() // a store both lenders reach
	o := lender.Options{Geometry: hostmem.Geometry{SlotBytes: 64 << 10, SlotCount: 4}}
	pub, err := lender.Lend(ctx, memdrv.New(store, memdrv.Options{}), o)
	if err != nil {
		panic(err)
	}
	defer pub.Close(ctx)
	fet, err := lender.Lend(ctx, memdrv.New(store, memdrv.Options{}), o)
	if err != nil {
		panic(err)
	}
	defer fet.Close(ctx)

	v := contract.View{Groups: []contract.Group{{Slots: []int32{0, 1, 2, 3},
		Names: [][]byte{[]byte("b0"), []byte("b1"), []byte("b2"), []byte("b3")}}}}
	copy(pub.Slot(0, 0), "block 0")
	copy(pub.Slot(0, 1), "block 1")
	a, _ := pub.Publish(v.Cut(2), nil)
	out, _ := contract.Settle(ctx, a)
	fmt.Println("published:", out.Count(contract.Ready))

	found, _ := fet.Lookup(ctx, v, binding.LookupOptions{})
	a, _ = fet.Fetch(v.Cut(found.Bound), nil)
	out, _ = contract.Settle(ctx, a)
	fmt.Printf("fetched %d: %s; compute %d\n", out.Count(contract.Ready), fet.Slot(0, 1)[:7], v.Rest(found.Bound).Rows())
	// Output:
	// published: 2
	// fetched 2: block 1; compute 2
}
