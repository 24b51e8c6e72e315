// guide:program

// Command roundtrip is the engine guide's program. Two engines lend
// staging memory to kvshare over one store. The first computes a
// request's blocks and publishes the first n; the second looks the
// request up, fetches the prefix the store holds, checks it, and
// computes the rest.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/lender"
	"github.com/kvshare/kvshare/memdrv"
)

// One region per layer, one slot per block of one layer.
const layers, blocks, blockBytes = 2, 64, 64 << 10

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store := memdrv.NewStore() // or Mooncake, Redis, disk: see "Choosing a store"
	open := func(context.Context) (contract.Driver, error) { return memdrv.New(store, memdrv.Options{}), nil }
	if err := run(ctx, open, open, 48); err != nil {
		log.Fatalln("roundtrip:", err)
	}
}

// run lends two engines' memory, each over the driver its func opens,
// and moves a request's first n blocks from the first to the second.
func run(ctx context.Context, openA, openB func(context.Context) (contract.Driver, error), n int) (err error) {
	o := lender.Options{Geometry: hostmem.Geometry{SlotBytes: blockBytes, SlotCount: blocks, Regions: layers}}
	o.Backend = binding.Config{KeyPrefix: "guide"} // the model, dtype and rank: what shapes the bytes
	a, err := lender.Open(ctx, openA, o)
	if err != nil {
		return err // nothing stays opened, lent or mapped
	}
	defer func() { err = errors.Join(err, a.Close(ctx)) }() // a *lender.Kept says what is kept, and why
	b, err := lender.Open(ctx, openB, o)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, b.Close(ctx)) }()

	var view contract.View // one group per layer, in its region: the request's blocks in order
	for layer := range layers {
		g := contract.Group{Region: layer}
		for block := range blocks {
			g.Slots = append(g.Slots, int32(block))
			g.Names = append(g.Names, fmt.Appendf(nil, "request-1/%d/%d", layer, block)) // an engine: a hash chained over the tokens
			copy(a.Slot(layer, block), kv(layer, block))                                 // the first engine computed it
		}
		view.Groups = append(view.Groups, g)
	}
	if published, err := a.Publish(view.Cut(n), nil); err != nil {
		return err // refused: nothing reached the store
	} else if _, err := contract.Settle(ctx, published); err != nil { // stored, the slots a's again
		return err
	}
	found, err := b.Lookup(ctx, view, binding.LookupOptions{}) // lends nothing
	if err != nil {
		return err
	}
	present := view.Cut(found.Bound)
	fetched, err := b.Fetch(present, nil)
	if err != nil {
		return err
	}
	out, err := contract.Settle(ctx, fetched) // the outcome, and the slots b's again
	if err != nil {
		return err
	}
	have := present.ResumeBound(out) // a block found may be gone by the fetch: compute it too
	for layer := range layers {
		for block := range blocks {
			if block >= have {
				copy(b.Slot(layer, block), kv(layer, block)) // computed; published as a did
			} else if !bytes.Equal(b.Slot(layer, block), kv(layer, block)) {
				return fmt.Errorf("layer %d block %d differs after the round trip", layer, block)
			}
		}
	}
	fmt.Printf("found %d blocks of %d, fetched %d, computed %d\n", found.Bound, blocks, have, blocks-have)
	return nil
}

// kv stands in for the engine's prefill: one block's KV bytes.
func kv(layer, block int) []byte { return bytes.Repeat([]byte{byte(layer), byte(block)}, blockBytes/2) }

// guide:end
