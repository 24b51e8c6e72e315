package binding_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// A publish at a deadline, drained later: the store holds both rows
// inside their transfers past the deadline, so the outcome is forced
// then (both rows undelivered, Pending), while the slots stay lent until
// the store lets the rows go; only then is the attempt done.
func ExampleBackend_PublishBy() {
	store := memdrv.NewStore()
	driver := memdrv.New(store, memdrv.Options{})
	mem, err := memdrv.Alloc(4096, 2, contract.Host)
	if err != nil {
		fmt.Println(err)
		return
	}
	regions, err := binding.Bind(driver, []contract.SlotRegion{mem.Region}, lenderHold{"lender"})
	if err != nil {
		fmt.Println(err)
		return
	}
	backend, err := binding.New(regions, binding.Config{KeyPrefix: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	gate := store.HoldTransfers(memdrv.PutDir) // a slow store: rows stop half way

	att, err := backend.PublishBy(contract.View{Groups: []contract.Group{
		{Region: 0, Slots: []int32{0, 1}, Names: [][]byte{[]byte("block-0"), []byte("block-1")}},
	}}, nil, time.Now().Add(20*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := att.Wait(context.Background())
	fmt.Println("deadline passed:", errors.Is(out.Fault, binding.ErrDeadline))
	fmt.Println("rows:", out.Rows, "delivered:", out.Prefix())
	fmt.Println("quiesced:", att.Quiesced())

	gate.Release() // the store lets the rows go
	<-att.Done()
	fmt.Println("quiesced:", att.Quiesced())

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fmt.Println("closed:", backend.Close(ctx), driver.Close())
	fmt.Println("memory freed:", mem.Free())
	// Output:
	// deadline passed: true
	// rows: [pending pending] delivered: 0
	// quiesced: false
	// quiesced: true
	// lender: hold released by the binding
	// closed: <nil> <nil>
	// memory freed: <nil>
}
