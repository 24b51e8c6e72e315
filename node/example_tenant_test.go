package node_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/node"
	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/patience"
)

// A node whose configuration gives this process's user the tenant acme,
// with 8 KiB of lent memory over all its sessions: an engine attached
// under a scope of acme lends up to the limit and is refused beyond it,
// naming the limit and the tenant; a scope declaring another tenant is
// refused at the dial. Every key the engine makes is under its scope.
func Example_tenants() {
	ctx, cancel := context.WithTimeout(context.Background(), patience.Wait())
	defer cancel()
	drv := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	dir, _ := os.MkdirTemp("", "node-example")
	defer os.RemoveAll(dir)
	socket := filepath.Join(dir, "node.sock")
	n, err := node.New(node.Config{Driver: drv, Socket: socket, RequireScope: true, Tenants: []node.Tenant{
		{Name: "acme", UIDs: []uint32{uint32(os.Getuid())}, MaxLentBytes: 8 << 10},
	}})
	if err != nil {
		panic(err)
	}
	l, err := node.Listen(socket, 0o600)
	if err != nil {
		panic(err)
	}
	go n.Serve(ctx, l)

	scope := keys.Scope{Model: "meta-llama/Llama-3.1-8B-Instruct", Revision: "0e9e39f", KVDType: "fp16",
		TokensPerBlock: 16, KVHeads: 8, HeadDim: 128, Layers: 32, TPSize: 1, PPSize: 1,
		HashAlgorithm: "sha256-cbor", Tenant: "acme"}
	c, err := nodeclient.Dial(ctx, socket, nodeclient.Options{Engine: "acme-0", Scope: scope})
	if err != nil {
		panic(err)
	}
	first, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: 4096, SlotCount: 2})
	fmt.Println("8 KiB lent:", err)
	_, err = c.Lend(ctx, nodeclient.Geometry{SlotBytes: 4096, SlotCount: 1})
	re, _ := errors.AsType[*nodewire.RefusedError](err)
	fmt.Println("4 KiB more:", errors.Is(err, nodewire.ErrTenantLimit), re.Field, re.Message)
	fmt.Println("returned:", first.Return(ctx))
	_ = c.Close(ctx)

	scope.Tenant = "globex"
	_, err = nodeclient.Dial(ctx, socket, nodeclient.Options{Engine: "intruder", Scope: scope})
	fmt.Println("globex:", errors.Is(err, nodewire.ErrTenantNotAllowed))

	fmt.Println("held at shutdown:", n.Shutdown(ctx))
	fmt.Println("drained:", drv.Drain(ctx), "closed:", drv.Close())
	// Output:
	// 8 KiB lent: <nil>
	// 4 KiB more: true tenant.lent_bytes tenant "acme": 8192 bytes lent and 4096 more asked, over its limit of 8192
	// returned: <nil>
	// globex: true
	// held at shutdown: []
	// drained: true closed: <nil>
}
