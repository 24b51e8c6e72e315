package engineguide_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/lender"
	"github.com/kvshare/kvshare/memdrv"
)

// guide:lend
// lend maps staging memory — slots slots of slotBytes each, locked in
// RAM where the system allows — and lends it to a backend over driver
// with cfg. The lender owns driver from this call on: on a failure it
// has closed it and unmapped the memory before it returns.
func lend(ctx context.Context, driver contract.Driver, cfg binding.Config, slots int, slotBytes int64) (*lender.Lender, error) {
	return lender.Lend(ctx, driver, lender.Options{
		Geometry: hostmem.Geometry{SlotBytes: slotBytes, SlotCount: slots}, // Regions: 0 means 1
		Memory:   hostmem.Options{Lock: true},                              // asked, never required: Memory().Report() says
		Backend:  cfg,
	})
}

// guide:end

// guide:giveback
// giveBack closes a lender: everything it can give back is given back
// (the driver closed, the memory unmapped). What it kept for good it
// reports, and the engine takes those slots out of its free list for
// the life of the process.
func giveBack(ctx context.Context, l *lender.Lender, log *slog.Logger) error {
	err := l.Close(ctx)
	var kept *lender.Kept
	switch {
	case errors.As(err, &kept):
		log.Warn("staging memory kept for good", "bytes", kept.Mapped, "held", kept.Held, "why", kept.Why)
	case err != nil: // time ran out (errors.Is(err, context.DeadlineExceeded)): nothing freed yet
		log.Info("staging memory not given back yet; closing again later", "err", err)
	}
	return err
}

// guide:end

// guide:region
// stagingRegion describes staging memory the engine allocated itself
// (cudaHostAlloc, mmap, a C allocator): slots slots of slotBytes each,
// starting at base. kvshare never allocates, moves or frees it.
func stagingRegion(base uintptr, slots int, slotBytes int64) contract.SlotRegion {
	return contract.SlotRegion{
		Base:      base,
		SlotBytes: slotBytes,
		SlotCount: slots,
		Len:       slotBytes * int64(slots),
		Kind:      contract.Host, // contract.Device only for a driver that declares DeviceMemory
	}
}

// guide:end

// guide:hold
// stagingHold is the engine's side of the hold: while it is held, the
// engine keeps the staging memory mapped and never frees it. The binding
// calls Release once, when no store can touch the memory any more.
type stagingHold struct {
	released chan struct{}
}

func (h *stagingHold) Release() { close(h.released) }

// guide:end

// guide:ownmemory
// lendOwn lends memory the engine allocated itself — its regions, under
// its own hold — to a backend over driver, which the backend owns from
// now on. On a failure the driver is closed; the memory is the engine's
// again once hold is released, and until then must stay mapped.
func lendOwn(ctx context.Context, driver contract.Driver, regions []contract.SlotRegion, hold binding.Hold) (*binding.Backend, error) {
	b, err := binding.Open(ctx, binding.Loan{Regions: regions, Hold: hold}, driver, binding.Config{KeyPrefix: "engine"})
	var live *binding.LiveRegistrationError
	if errors.As(err, &live) { // a registration may be live: revoke it first
		return nil, errors.Join(err, live.Unbind(ctx)) // Unbind's nil: hold released, driver closed
	}
	return b, err // a refusal released the hold and closed the driver already
}

// guide:end

// A region built from memory the engine mapped itself is valid geometry,
// and a region of device memory is not served by a driver that cannot
// reach it: Open refuses, and the hold comes back.
func Example_regions() {
	mem, err := hostmem.Map(hostmem.Geometry{SlotBytes: 4096, SlotCount: 8}, hostmem.Options{})
	if err != nil {
		panic(err)
	}
	defer func() { _ = mem.Free() }() // never lent (no hold taken): it frees at once
	host := stagingRegion(mem.Regions()[0].Base, 8, 4096)
	fmt.Println("host region:", host.Validate())

	device := host
	device.Kind = contract.Device
	hold := &stagingHold{released: make(chan struct{})}
	_, err = lendOwn(context.Background(), memdrv.New(memdrv.NewStore(), memdrv.Options{}), []contract.SlotRegion{device}, hold)
	fmt.Println("construction rejected:", errors.Is(err, contract.ErrConstructionRejected))
	<-hold.released
	fmt.Println("hold released by the binding")

	hold = &stagingHold{released: make(chan struct{})}
	b, err := lendOwn(context.Background(), memdrv.New(memdrv.NewStore(), memdrv.Options{}), []contract.SlotRegion{host}, hold)
	fmt.Println("lent:", err)
	fmt.Println("closed:", b.Close(context.Background()))
	<-hold.released
	fmt.Println("hold released: the engine may free its memory")
	// Output:
	// host region: <nil>
	// construction rejected: true
	// hold released by the binding
	// lent: <nil>
	// closed: <nil>
	// hold released: the engine may free its memory
}

// Lend refuses a geometry it cannot map, and the driver it was given is
// closed all the same: nothing is left open or mapped.
func Example_lendRefused() {
	before := hostmem.Totals().MappedNow
	driver := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	_, err := lend(context.Background(), driver, binding.Config{}, 0, 4096)
	fmt.Println("geometry refused:", errors.Is(err, hostmem.ErrGeometry))
	_, err = driver.Register(contract.SlotRegion{})
	fmt.Println("driver closed:", errors.Is(err, contract.ErrDriverRejected))
	fmt.Println("nothing mapped:", hostmem.Totals().MappedNow == before)
	// Output:
	// geometry refused: true
	// driver closed: true
	// nothing mapped: true
}
