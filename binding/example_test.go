package binding_test

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// lenderHold is the lender's side of a hold: the binding calls Release
// once no store can touch the memory.
type lenderHold struct{ name string }

func (h lenderHold) Release() { fmt.Println(h.name + ": hold released by the binding") }

// endpoint is one lender's staging memory with its driver and backend.
type endpoint struct {
	name    string
	mem     *memdrv.Memory
	driver  *memdrv.Driver
	backend *binding.Backend
}

func openEndpoint(name string, store *memdrv.Store) (*endpoint, error) {
	mem, err := memdrv.Alloc(4096, 8, contract.Host)
	if err != nil {
		return nil, err
	}
	driver := memdrv.New(store, memdrv.Options{})
	regions, err := binding.Bind(driver, []contract.SlotRegion{mem.Region}, lenderHold{name})
	if err != nil {
		return nil, err
	}
	backend, err := binding.New(regions, binding.Config{KeyPrefix: "example"})
	if err != nil {
		return nil, err
	}
	return &endpoint{name, mem, driver, backend}, nil
}

// close follows the owner's cleanup order: Shutdown answers no labels,
// which means the binding released the hold; then the driver is closed,
// last; only then is the memory freed.
func (e *endpoint) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if held := e.backend.Shutdown(ctx); len(held) > 0 {
		fmt.Println(e.name+": still held, keeping the memory:", held)
		return
	}
	<-e.backend.Closed()
	fmt.Println(e.name+": driver closed:", e.driver.Close())
	fmt.Println(e.name+": memory freed:", e.mem.Free())
}

// Two backends over one shared store: one lender publishes three blocks
// from its slots, the other fetches them into different slots of its own.
func Example() {
	store := memdrv.NewStore()
	a, err := openEndpoint("A", store)
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := openEndpoint("B", store)
	if err != nil {
		fmt.Println(err)
		return
	}

	names := [][]byte{[]byte("block-0"), []byte("block-1"), []byte("block-2")}
	for i := range 3 {
		copy(a.mem.Slot(i), bytes.Repeat([]byte{byte('x' + i)}, 4096))
	}
	published, err := a.backend.Publish(contract.View{Groups: []contract.Group{
		{Region: 0, Slots: []int32{0, 1, 2}, Names: names},
	}}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	<-published.Done() // quiesced: A may reuse slots 0-2
	out, _ := published.Outcome()
	fmt.Println("published rows:", out.Prefix(), "fault:", out.Fault)

	fetched, err := b.backend.Fetch(contract.View{Groups: []contract.Group{
		{Region: 0, Slots: []int32{5, 6, 7}, Names: names},
	}}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	<-fetched.Done() // quiesced: B may read slots 5-7
	out, _ = fetched.Outcome()
	fmt.Println("fetched rows:", out.Prefix(), "fault:", out.Fault)
	equal := true
	for i := range 3 {
		equal = equal && bytes.Equal(a.mem.Slot(i), b.mem.Slot(5+i))
	}
	fmt.Println("bytes equal:", equal)

	a.close()
	b.close()
	// Output:
	// published rows: 3 fault: <nil>
	// fetched rows: 3 fault: <nil>
	// bytes equal: true
	// A: hold released by the binding
	// A: driver closed: <nil>
	// A: memory freed: <nil>
	// B: hold released by the binding
	// B: driver closed: <nil>
	// B: memory freed: <nil>
}
