package engineguide_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
)

// guide:fault
// fetchFault says what an engine does with a fetch's fault. Undelivered
// rows without a fault (a miss, a block not ready yet, a refusal) are
// simply recomputed; the fault says why the fetch stopped early.
func fetchFault(o contract.Outcome) string {
	switch {
	case o.Fault == nil:
		return "none: recompute from the resume bound"
	case errors.Is(o.Fault, binding.ErrOutcomeForced):
		return "forced by Shutdown: only the rows marked delivered arrived"
	case errors.Is(o.Fault, binding.ErrRowFault):
		return "a row faulted (its slot is undefined): recompute from the resume bound, and count it"
	default: // the driver refused a call, or broke the protocol
		return "the call failed as a whole: " + o.Fault.Error()
	}
}

// guide:end

// A get whose transfer may still be running when the store gave up on
// it: the outcome is known, but the attempt never quiesces, the slot
// stays lent, Shutdown names what is held, the hold is never released
// and the memory must never be freed.
func Example_unprovable() {
	store := memdrv.NewStore()
	driver := memdrv.New(store, memdrv.Options{})
	woke := make(chan struct{}, 1)
	cfg := binding.Config{
		KeyPrefix: "engine",
		Logger:    slog.New(slog.DiscardHandler), // the backend warns here; this example keeps quiet
		Wake: func() {
			select {
			case woke <- struct{}{}:
			default:
			}
		},
	}
	l, err := lend(driver, cfg, 4, 4096)
	if err != nil {
		panic(err)
	}
	row := func(slot int32) contract.View {
		return contract.View{Groups: []contract.Group{{Slots: []int32{slot}, Names: [][]byte{[]byte("block")}}}}
	}
	a, err := publish(l.backend, row(0))
	if err != nil {
		panic(err)
	}
	<-a.Done()

	stem, _ := keys.NewStem("engine")
	key, _ := stem.Key([]byte("block"))
	driver.UnprovableGets(key) // the store gives up on the get, but cannot say the transfer ended
	a, err = l.backend.Fetch(row(1), nil)
	if err != nil {
		panic(err)
	}
	out, known := a.Outcome()
	for !known {
		<-woke
		out, known = a.Outcome()
	}
	fmt.Println("fault:", fetchFault(out))
	fmt.Println("quiesced:", a.Quiesced())
	s := l.backend.Stats()
	fmt.Println("calls unprovable:", s.CallsUnprovable, "rows lent:", s.RowsLent, "bytes lent:", s.BytesLent)

	fmt.Println("close:", l.close(context.Background()))
	select {
	case <-l.hold.released:
		fmt.Println("hold released")
	default:
		fmt.Println("hold kept")
	}
	fmt.Println("free refused:", errors.Is(l.mem.Free(), memdrv.ErrMemoryLent))
	// Output:
	// fault: a row faulted (its slot is undefined): recompute from the resume bound, and count it
	// quiesced: false
	// calls unprovable: 1 rows lent: 1 bytes lent: 4096
	// close: still held, memory kept: [attempt 2 (fetch) region 0]
	// hold kept
	// free refused: true
}
