package driverview_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/node/driverview"
)

type printHold string

func (h printHold) Release() { fmt.Println(string(h) + ": hold released") }

// Two lends over one shared driver, each bound through a view of its
// own: the first publishes and closes (its view drained and closed, the
// shared driver left open), the second fetches what it published; the
// owner closes the shared driver last.
func Example() {
	shared := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	open := func(name string) (*binding.Backend, *memdrv.Memory) {
		mem, err := memdrv.Alloc(4096, 2, contract.Host)
		if err != nil {
			panic(err)
		}
		b, err := binding.Open(context.Background(), binding.Loan{Regions: []contract.SlotRegion{mem.Region}, Hold: printHold(name)},
			driverview.New(shared).Driver(), binding.Config{KeyPrefix: "example"})
		if err != nil {
			panic(err)
		}
		return b, mem
	}
	view := contract.View{Groups: []contract.Group{{Slots: []int32{0}, Names: [][]byte{[]byte("block")}}}}
	ctx := context.Background()

	first, firstMem := open("first")
	copy(firstMem.Slot(0), bytes.Repeat([]byte("k"), 4096))
	pub, _ := first.Publish(view, nil)
	<-pub.Done()
	fmt.Println("first closed:", first.Close(ctx), firstMem.Free())

	second, secondMem := open("second")
	fet, _ := second.Fetch(view, nil)
	<-fet.Done()
	out, _ := fet.Outcome()
	fmt.Println("second fetched:", out.Rows, bytes.Equal(secondMem.Slot(0), bytes.Repeat([]byte("k"), 4096)))
	fmt.Println("second closed:", second.Close(ctx), secondMem.Free())

	fmt.Println("shared drained:", shared.Drain(ctx), "closed:", shared.Close())
	// Output:
	// first: hold released
	// first closed: <nil> <nil>
	// second fetched: [ready] true
	// second: hold released
	// second closed: <nil> <nil>
	// shared drained: true closed: <nil>
}
