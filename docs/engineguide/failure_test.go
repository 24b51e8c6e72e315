package engineguide_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/lender"
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
	case errors.Is(o.Fault, binding.ErrDeadline):
		return "the deadline came first: only the rows marked delivered arrived; the slots wait for quiescence"
	case errors.Is(o.Fault, binding.ErrOutcomeForced):
		return "forced by Shutdown: only the rows marked delivered arrived"
	case errors.Is(o.Fault, binding.ErrRowFault):
		return "a row faulted (its slot is undefined): recompute from the resume bound, and count it"
	default: // the driver refused a call, or broke the protocol
		return "the call failed as a whole: " + o.Fault.Error()
	}
}

// guide:end

// guide:verdicts
// nextStep is what an engine does about one row of an outcome, by its
// status (Outcome.Rows, in view order).
func nextStep(s contract.RowStatus) string {
	switch s {
	case contract.Ready:
		return "use it (a publish: it is stored)"
	case contract.Miss:
		return "compute it: the store does not have it"
	case contract.NotReady:
		return "ask again soon: another writer is still storing it"
	case contract.Declined:
		return "back off: the store refused it (full), or this driver will not write it again"
	case contract.Fault:
		return "compute it, and count the fault: a fetched slot is undefined"
	case contract.Cancelled:
		return "compute it, or submit it again: the row never ran"
	}
	return "treat it as undelivered: Shutdown forced the outcome first" // Pending
}

// guide:end

// A get whose transfer may still be running when the store gave up on
// it, over a driver that cannot recycle: the outcome is known, but the
// attempt never quiesces, the slot stays lent, and Close keeps the
// memory for good, saying what and why; it can never be freed.
func Example_unprovable() {
	ctx := context.Background()
	store := memdrv.NewStore()
	driver := memdrv.New(store, memdrv.Options{})
	quiet := slog.New(slog.DiscardHandler)         // the backend warns here; this example keeps quiet
	noRecycle := struct{ contract.Driver }{driver} // seen as a contract.Driver alone: no Recycle
	l, err := lend(ctx, noRecycle, binding.Config{KeyPrefix: "engine", Logger: quiet}, 4, 4096)
	if err != nil {
		panic(err)
	}
	row := func(slot int32) contract.View {
		return contract.View{Groups: []contract.Group{{Slots: []int32{slot}, Names: [][]byte{[]byte("block")}}}}
	}
	a, err := publish(l.Backend, row(0))
	if err != nil {
		panic(err)
	}
	<-a.Done()

	stem, _ := keys.NewStem("engine")
	key, _ := stem.Key([]byte("block"))
	driver.UnprovableGets(key) // the store gives up on the get, but cannot say the transfer ended
	a, err = l.Fetch(row(1), nil)
	if err != nil {
		panic(err)
	}
	out, _ := a.Wait(ctx) // the outcome comes; quiescence never will
	fmt.Println("fault:", fetchFault(out))
	fmt.Println("row:", out.Rows[0], "quiesced:", a.Quiesced())
	s := l.Stats()
	fmt.Println("calls unprovable:", s.CallsUnprovable, "rows lent:", s.RowsLent, "bytes lent:", s.BytesLent)

	err = giveBack(ctx, l, quiet) // answers at once: nothing can change
	var kept *lender.Kept
	fmt.Println("kept for good:", errors.As(err, &kept), kept.Held, kept.Mapped, "bytes mapped")
	fmt.Println("held for good:", errors.Is(err, binding.ErrHeldForGood))
	fmt.Println("free refused:", errors.Is(l.Memory().Free(), hostmem.ErrLent))
	// Output:
	// fault: a row faulted (its slot is undefined): recompute from the resume bound, and count it
	// row: fault quiesced: false
	// calls unprovable: 1 rows lent: 1 bytes lent: 4096
	// kept for good: true [attempt 2 (fetch) region 0] 16384 bytes mapped
	// held for good: true
	// free refused: true
}

// The same unprovable get, over a driver that can recycle (memdrv can;
// the Mooncake driver destroys its client and opens a fresh one): Close
// reclaims the call, the attempt quiesces, and everything is given back.
func Example_reclaim() {
	ctx := context.Background()
	store := memdrv.NewStore()
	driver := memdrv.New(store, memdrv.Options{})
	l, err := lend(ctx, driver, binding.Config{KeyPrefix: "engine", Logger: slog.New(slog.DiscardHandler)}, 4, 4096)
	if err != nil {
		panic(err)
	}
	view := contract.View{Groups: []contract.Group{{Slots: []int32{1}, Names: [][]byte{[]byte("block")}}}}
	stem, _ := keys.NewStem("engine")
	key, _ := stem.Key([]byte("block"))
	store.Set(key, make([]byte, 4096))
	driver.UnprovableGets(key)
	a, err := l.Fetch(view, nil)
	if err != nil {
		panic(err)
	}
	out, _ := a.Wait(ctx)
	fmt.Println("row:", out.Rows[0], "quiesced:", a.Quiesced())

	fmt.Println("closed and freed:", l.Close(ctx))
	s := l.Stats()
	fmt.Println("reclaims:", s.Reclaims, "bytes given back:", s.BytesReclaimed, "quiesced:", a.Quiesced())
	// Output:
	// row: fault quiesced: false
	// closed and freed: <nil>
	// reclaims: 1 bytes given back: 4096 quiesced: true
}
