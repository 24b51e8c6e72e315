package engineguide_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/memdrv"
)

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

// guide:lend
// lender is one engine's staging memory, lent to kvshare.
type lender struct {
	mem     *hostmem.Memory // host memory outside the Go heap
	hold    *hostmem.Hold   // this loan's hold on it: Free waits for its release
	backend *binding.Backend
}

// lend maps staging memory (slots slots of slotBytes each, locked in RAM
// where the system allows) and lends it to a backend over driver, which
// the backend then owns.
func lend(ctx context.Context, driver contract.Driver, cfg binding.Config, slots int, slotBytes int64) (*lender, error) {
	mem, err := hostmem.Map(hostmem.Geometry{SlotBytes: slotBytes, SlotCount: slots}, hostmem.Options{Lock: true})
	if err != nil {
		return nil, err
	}
	hold, err := mem.Hold() // one hold for each loan of the memory
	if err != nil {
		return nil, err // refused only for memory already freed
	}
	backend, err := binding.Open(ctx, binding.Loan{Regions: mem.Regions(), Hold: hold}, driver, cfg)
	if err != nil {
		return nil, errors.Join(err, mem.Free()) // Free refuses memory a registration may still cover
	}
	return &lender{mem: mem, hold: hold, backend: backend}, nil
}

// guide:end

// guide:close
// close gives everything back (Backend.Close runs the owner's order and
// closes the driver), then frees the memory. What is still held is kept,
// never freed; the error says what and why.
func (l *lender) close(ctx context.Context) error {
	if err := l.backend.Close(ctx); err != nil {
		if errors.Is(err, binding.ErrHeldForGood) {
			l.hold.KeepForGood(err) // Free refuses from now on
		}
		return err // or errors.Is(err, context.DeadlineExceeded): Close again later
	}
	return l.mem.Free()
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
	driver := memdrv.New(memdrv.NewStore(), memdrv.Options{}) // no DeviceMemory
	hold := &stagingHold{released: make(chan struct{})}
	_, err = binding.Open(context.Background(), binding.Loan{Regions: []contract.SlotRegion{device}, Hold: hold}, driver, binding.Config{})
	fmt.Println("construction rejected:", errors.Is(err, contract.ErrConstructionRejected))
	<-hold.released
	fmt.Println("hold released by the binding")
	// Output:
	// host region: <nil>
	// construction rejected: true
	// hold released by the binding
}
