package node_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/node"
	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/patience"
)

// A node serves the embedded bounded store at a socket; an engine (here
// in the same process, through the Go client) lends memory, publishes a
// row, looks it up, fetches it into another slot and returns the memory;
// then the node shuts down with nothing held, and the driver is closed
// last.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Wait())
	defer cancel()
	store, err := memdrv.NewBoundedStore(memdrv.StoreOptions{Capacity: 1 << 20})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	drv := memdrv.New(store, memdrv.Options{})
	dir, _ := os.MkdirTemp("", "node-example")
	defer os.RemoveAll(dir)
	n, err := node.New(node.Config{Driver: drv, Socket: filepath.Join(dir, "node.sock")})
	if err != nil {
		panic(err)
	}
	l, err := node.Listen(filepath.Join(dir, "node.sock"), 0o600)
	if err != nil {
		panic(err)
	}
	go n.Serve(ctx, l)

	c, err := nodeclient.Dial(ctx, filepath.Join(dir, "node.sock"), nodeclient.Options{Engine: "example"})
	if err != nil {
		panic(err)
	}
	lend, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: 64, SlotCount: 4, Regions: 2})
	if err != nil {
		panic(err)
	}
	copy(lend.Slot(0, 1), "block 7, layer 0")
	name := [][]byte{[]byte("block-7/0")}
	a, _ := lend.Publish(ctx, contract.View{Groups: []contract.Group{{Region: 0, Slots: []int32{1}, Names: name}}}, nodeclient.TransferOptions{})
	out, _ := a.Wait(ctx)
	quiesced(ctx, a)
	fmt.Println("published:", out.Rows)
	found, _ := c.Lookup(ctx, contract.View{Groups: []contract.Group{{Names: name}}}, nodeclient.LookupOptions{})
	fmt.Println("looked up:", found.Rows)
	a, _ = lend.Fetch(ctx, contract.View{Groups: []contract.Group{{Region: 1, Slots: []int32{3}, Names: name}}}, nodeclient.TransferOptions{})
	out, _ = a.Wait(ctx)
	quiesced(ctx, a)
	fmt.Printf("fetched: %v %q\n", out.Rows, lend.Slot(1, 3)[:16])
	fmt.Println("returned:", lend.Return(ctx))
	_ = c.Close(ctx)

	fmt.Println("held at shutdown:", n.Shutdown(ctx))
	fmt.Println("drained:", drv.Drain(ctx), "closed:", drv.Close())
	// Output:
	// published: [ready]
	// looked up: [present]
	// fetched: [ready] "block 7, layer 0"
	// returned: <nil>
	// held at shutdown: []
	// drained: true closed: <nil>
}

// quiesced waits within ctx until the attempt's slots may be reused.
func quiesced(ctx context.Context, a *nodeclient.Attempt) {
	select {
	case <-a.Done():
	case <-ctx.Done():
		panic(fmt.Sprintf("%v did not quiesce: %v", a, ctx.Err()))
	}
}
