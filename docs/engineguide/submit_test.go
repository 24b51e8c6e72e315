package engineguide_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// guide:submit
// publish submits v, telling a view the backend refused (a bug in the
// engine: nothing reached the store) from a backend that takes no more
// work (it was shut down, or its driver broke the protocol: stop
// offloading, and alert).
func publish(b *binding.Backend, v contract.View) (contract.Attempt, error) {
	a, err := b.Publish(v, nil)
	var bad *binding.SubmissionError
	switch {
	case errors.As(err, &bad): // wraps contract.ErrInvalidSubmission
		return nil, fmt.Errorf("view refused at group %d row %d: %s", bad.Group, bad.Row, bad.Reason)
	case errors.Is(err, contract.ErrSubmissionRejected):
		return nil, fmt.Errorf("the backend takes no more work: %w", err)
	}
	return a, err
}

// guide:end

// What the backend refuses, before anything reaches the store.
func Example_refused() {
	l, err := lend(context.Background(), memdrv.New(memdrv.NewStore(), memdrv.Options{}), binding.Config{KeyPrefix: "engine"}, 4, 4096)
	if err != nil {
		panic(err)
	}
	name := []byte("block")
	bad := map[string]contract.View{
		"slot out of range": {Groups: []contract.Group{{Slots: []int32{4}, Names: [][]byte{name}}}},
		"region not lent":   {Groups: []contract.Group{{Region: 1, Slots: []int32{0}, Names: [][]byte{name}}}},
		"empty name":        {Groups: []contract.Group{{Slots: []int32{0}, Names: [][]byte{{}}}}},
		"names != slots":    {Groups: []contract.Group{{Slots: []int32{0, 1}, Names: [][]byte{name}}}},
	}
	for _, what := range []string{"slot out of range", "region not lent", "empty name", "names != slots"} {
		_, err := publish(l.Backend, bad[what])
		fmt.Printf("%s: %v\n", what, err)
	}
	// A fetch may not write one slot twice; a publish may read it twice.
	twice := contract.View{Groups: []contract.Group{{Slots: []int32{0, 0}, Names: [][]byte{[]byte("a"), []byte("b")}}}}
	_, err = l.Backend.Fetch(twice, nil)
	fmt.Println("fetch into one slot twice refused:", errors.Is(err, contract.ErrInvalidSubmission))
	// memdrv, like the Mooncake driver, takes no hints.
	_, err = l.Backend.Fetch(contract.View{}, "prefetch")
	fmt.Println("hint refused:", errors.Is(err, contract.ErrInvalidSubmission))

	fmt.Println("closed:", l.Close(context.Background()))
	_, err = publish(l.Backend, contract.View{})
	fmt.Println("after Shutdown:", errors.Is(err, contract.ErrSubmissionRejected))
	// Output:
	// slot out of range: view refused at group 0 row 0: slot 4 out of range [0, 4) of region 0
	// region not lent: view refused at group 0 row -1: region 1 out of range: the binding has 1 regions
	// empty name: view refused at group 0 row 0: name of 0 bytes, want 1 to 512
	// names != slots: view refused at group 0 row -1: 2 slots but 1 names
	// fetch into one slot twice refused: true
	// hint refused: true
	// closed: <nil>
	// after Shutdown: true
}

// guide:calllimit
// spareSlots is how many slots a lender keeps back so that it still has
// slots to lease after stuck calls, each of which may pin for good as
// much as one driver call can pin.
func spareSlots(b *binding.Backend, region, stuck int) int {
	rows, _ := b.CallLimit(region)
	return stuck * rows
}

// guide:end

// CallLimit follows the caps: here the backend's own cap of 8 rows per
// driver call.
func Example_callLimit() {
	cfg := binding.Config{KeyPrefix: "engine", MaxRowsPerCall: 8}
	l, err := lend(context.Background(), memdrv.New(memdrv.NewStore(), memdrv.Options{}), cfg, 64, 4096)
	if err != nil {
		panic(err)
	}
	rows, bytes := l.Backend.CallLimit(0)
	fmt.Println("one call pins at most:", rows, "slots,", bytes, "bytes")
	fmt.Println("spare slots for 2 stuck calls:", spareSlots(l.Backend, 0, 2))
	fmt.Println(l.Close(context.Background()))
	// Output:
	// one call pins at most: 8 slots, 32768 bytes
	// spare slots for 2 stuck calls: 16
	// <nil>
}

// An engine's loop learns of outcomes and quiescence through Wake.
func Example_wake() {
	// guide:wake
	wake := make(chan struct{}, 1)
	cfg := binding.Config{
		KeyPrefix: "engine",
		// Called after an attempt's outcome or quiescence is published,
		// from whichever goroutine published it: it must not block.
		Wake: func() {
			select {
			case wake <- struct{}{}:
			default: // a wake is pending already; the loop looks at every attempt
			}
		},
	}
	// guide:end
	l, err := lend(context.Background(), memdrv.New(memdrv.NewStore(), memdrv.Options{}), cfg, 4, 4096)
	if err != nil {
		panic(err)
	}
	a, err := publish(l.Backend, contract.View{Groups: []contract.Group{{Slots: []int32{0}, Names: [][]byte{[]byte("x")}}}})
	if err != nil {
		panic(err)
	}
	// guide:loop
	for !a.Quiesced() { // the engine's loop, between steps
		<-wake
	}
	out, _ := a.Outcome() // known: quiescence never comes before the outcome
	// guide:end
	fmt.Println("delivered:", out.Delivered)
	fmt.Println(l.Close(context.Background()))
	// Output:
	// delivered: [true]
	// <nil>
}
