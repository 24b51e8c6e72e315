package nodeclient_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/patience"
)

// An engine attaches to the node, lends memory, publishes a row from a
// slot, looks it up, fetches it into another slot, and gives the memory
// back. (The node here is a stand-in serving from a map; `kvshare node`
// serves a real store at a socket path the same way.)
func Example() {
	dir, _ := os.MkdirTemp("", "nodeclient-example")
	defer os.RemoveAll(dir)
	node, err := listenFakeNode(dir, nil)
	if err != nil {
		panic(err)
	}
	defer node.stop()
	socket := node.path

	ctx, cancel := context.WithTimeout(context.Background(), patience.Wait())
	defer cancel()
	c, err := nodeclient.Dial(ctx, socket, nodeclient.Options{Engine: "example"})
	if err != nil {
		panic(err)
	}
	defer c.Close(ctx)

	l, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: 64, SlotCount: 8, Regions: 2})
	if err != nil {
		panic(err)
	}
	copy(l.Slot(0, 3), "the KV of block 3, layer 0")
	row := contract.View{Groups: []contract.Group{{Region: 0, Slots: []int32{3}, Names: [][]byte{[]byte("block-3/0")}}}}
	a, err := l.Publish(ctx, row, nodeclient.TransferOptions{})
	if err != nil {
		panic(err)
	}
	o, _ := a.Wait(ctx)
	fmt.Println("published:", o.Rows)
	quiesce(ctx, a) // slot 3 may be reused from here on

	found, _ := c.Lookup(ctx, contract.View{Groups: []contract.Group{{Names: [][]byte{[]byte("block-3/0"), []byte("block-4/0")}}}}, nodeclient.LookupOptions{})
	fmt.Println("lookup:", found.Rows, "bound", found.Bound)

	back := contract.View{Groups: []contract.Group{{Region: 1, Slots: []int32{0}, Names: [][]byte{[]byte("block-3/0")}}}}
	a, err = l.Fetch(ctx, back, nodeclient.TransferOptions{})
	if err != nil {
		panic(err)
	}
	o, _ = a.Wait(ctx)
	fmt.Printf("fetched: %v %q\n", o.Rows, l.Slot(1, 0)[:26])
	quiesce(ctx, a)

	fmt.Println("returned:", l.Return(ctx))
	// Output:
	// published: [ready]
	// lookup: [present absent] bound 1
	// fetched: [ready] "the KV of block 3, layer 0"
	// returned: <nil>
}

// quiesce waits within ctx for a's slots to be reusable.
func quiesce(ctx context.Context, a *nodeclient.Attempt) {
	select {
	case <-a.Done():
	case <-ctx.Done():
		panic(fmt.Sprintf("%v did not quiesce: %v", a, ctx.Err()))
	}
}

// An engine asks how the client watches the node's process. A node in
// the engine's own process (as this stand-in is) can never be proven
// to have exited: a lend cut off from it is kept, and its Return says
// why. A node in a process of its own is watched by a pidfd, and
// WaitNodeExit returns nil once that process is gone.
func ExampleClient_WaitNodeExit() {
	dir, _ := os.MkdirTemp("", "nodeclient-example")
	defer os.RemoveAll(dir)
	node, err := listenFakeNode(dir, nil)
	if err != nil {
		panic(err)
	}
	defer node.stop()
	ctx, cancel := context.WithTimeout(context.Background(), patience.Wait())
	defer cancel()
	c, err := nodeclient.Dial(ctx, node.path, nodeclient.Options{Engine: "example", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	w := c.Watch()
	fmt.Println("proves:", w.Proves, "-", w.Via)
	l, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: 64, SlotCount: 8})
	if err != nil {
		panic(err)
	}
	_ = c.Close(ctx) // the connection ends with the lend not returned

	err = l.Return(ctx)
	var lost *nodeclient.NodeLostError
	fmt.Println("return:", errors.As(err, &lost), lost.Evidence, errors.Is(err, nodeclient.ErrNoEvidence))
	lends, bytes := c.Lent()
	fmt.Println("kept:", lends, bytes)
	// Output:
	// proves: false - no pidfd: the node runs in this process
	// return: true unknown: keep the slots true
	// kept: 1 4096
}
