// guide:readme

// Two lenders share kvshare's embedded store: one publishes two blocks,
// the other looks them up and fetches what the store holds. (This is the
// README's example; docs/engine-guide.md has the whole story.)
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/lender"
	"github.com/kvshare/kvshare/memdrv"
)

func main() {
	ctx, store := context.Background(), memdrv.NewStore() // Mooncake, Redis, disk: another driver here
	o := lender.Options{Geometry: hostmem.Geometry{SlotBytes: 64 << 10, SlotCount: 8}}
	pub, err := lender.Lend(ctx, memdrv.New(store, memdrv.Options{}), o) // maps memory, lends it
	check(err)
	defer func() { check(pub.Close(ctx)) }() // gives all back, or a *lender.Kept says what stays, and why
	get, err := lender.Lend(ctx, memdrv.New(store, memdrv.Options{}), o)
	check(err)
	defer func() { check(get.Close(ctx)) }()

	view := contract.View{Groups: []contract.Group{{Slots: []int32{0, 1}, Names: [][]byte{[]byte("req-42/0"), []byte("req-42/1")}}}}
	copy(pub.Slot(0, 0), "block 0: its keys and values")
	copy(pub.Slot(0, 1), "block 1: its keys and values")
	a, err := pub.Publish(view, nil)
	check(err)
	_, err = contract.Settle(ctx, a) // the outcome, and the slots free again
	check(err)
	found, err := get.Lookup(ctx, view, binding.LookupOptions{}) // lends nothing
	check(err)
	a, err = get.Fetch(view.Cut(found.Bound), nil) // the prefix the store holds
	check(err)
	out, err := contract.Settle(ctx, a)
	check(err)
	fmt.Printf("fetched %d of %d blocks: %q\n", out.Count(contract.Ready), found.Bound, get.Slot(0, 1)[:28])
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// guide:end
