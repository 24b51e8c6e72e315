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
// it: the outcome is known, but the attempt never quiesces, the slot
// stays lent, Shutdown names what is held, the hold is never released
// and the memory must never be freed.
func Example_unprovable() {
	ctx := context.Background()
	store := memdrv.NewStore()
	driver := memdrv.New(store, memdrv.Options{})
	cfg := binding.Config{
		KeyPrefix: "engine",
		Logger:    slog.New(slog.DiscardHandler), // the backend warns here; this example keeps quiet
	}
	l, err := lend(ctx, driver, cfg, 4, 4096)
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
	out, _ := a.Wait(ctx) // the outcome comes; quiescence never will
	fmt.Println("fault:", fetchFault(out))
	fmt.Println("row:", out.Rows[0], "quiesced:", a.Quiesced())
	s := l.backend.Stats()
	fmt.Println("calls unprovable:", s.CallsUnprovable, "rows lent:", s.RowsLent, "bytes lent:", s.BytesLent)

	err = l.close(ctx) // answers at once: nothing can change
	var held *binding.HeldError
	fmt.Println("held for good:", errors.Is(err, binding.ErrHeldForGood), errors.As(err, &held) && len(held.Held) == 2, held.Held)
	fmt.Println("free refused:", errors.Is(l.mem.Free(), hostmem.ErrLent))
	// Output:
	// fault: a row faulted (its slot is undefined): recompute from the resume bound, and count it
	// row: fault quiesced: false
	// calls unprovable: 1 rows lent: 1 bytes lent: 4096
	// held for good: true true [attempt 2 (fetch) region 0]
	// free refused: true
}

// guide:reclaim
// closeOrReclaim gives everything back, as close does; when only memory
// held for good stops it and the driver can recycle (tear down what
// could still touch that memory), it reclaims it and closes again.
func (l *lender) closeOrReclaim(ctx context.Context) error {
	err := l.backend.Close(ctx)
	if errors.Is(err, binding.ErrHeldForGood) {
		if _, rerr := l.backend.Reclaim(ctx); rerr == nil {
			err = l.backend.Close(ctx) // goes on where it stopped
		}
	}
	if err != nil {
		if errors.Is(err, binding.ErrHeldForGood) {
			l.hold.KeepForGood(err) // nothing could win it back
		}
		return err
	}
	return l.mem.Free()
}

// guide:end

// The same unprovable get, over a driver that can recycle (memdrv can;
// the Mooncake driver destroys its client and opens a fresh one): the
// reclaim gives the call back, the attempt quiesces, and Close and Free
// finish.
func Example_reclaim() {
	ctx := context.Background()
	store := memdrv.NewStore()
	driver := memdrv.New(store, memdrv.Options{})
	cfg := binding.Config{KeyPrefix: "engine", Logger: slog.New(slog.DiscardHandler)}
	l, err := lend(ctx, driver, cfg, 4, 4096)
	if err != nil {
		panic(err)
	}
	view := contract.View{Groups: []contract.Group{{Slots: []int32{1}, Names: [][]byte{[]byte("block")}}}}
	stem, _ := keys.NewStem("engine")
	key, _ := stem.Key([]byte("block"))
	store.Set(key, make([]byte, 4096))
	driver.UnprovableGets(key)
	a, err := l.backend.Fetch(view, nil)
	if err != nil {
		panic(err)
	}
	out, _ := a.Wait(ctx)
	fmt.Println("row:", out.Rows[0], "quiesced:", a.Quiesced())

	fmt.Println("closed and freed:", l.closeOrReclaim(ctx))
	s := l.backend.Stats()
	fmt.Println("reclaims:", s.Reclaims, "bytes given back:", s.BytesReclaimed, "quiesced:", a.Quiesced())
	// Output:
	// row: fault quiesced: false
	// closed and freed: <nil>
	// reclaims: 1 bytes given back: 4096 quiesced: true
}
