package engineguide_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
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
	mem     *memdrv.Memory // host memory outside the Go heap (an anonymous mmap)
	backend *binding.Backend
}

// lend maps staging memory (slots slots of slotBytes each) and lends it
// to a backend over driver, which the backend then owns. On an error the
// memory is freed if the hold came back, and kept if a registration may
// be live.
func lend(ctx context.Context, driver contract.Driver, cfg binding.Config, slots int, slotBytes int64) (*lender, error) {
	mem, err := memdrv.Alloc(slotBytes, slots, contract.Host)
	if err != nil {
		return nil, err
	}
	hold := &stagingHold{released: make(chan struct{})}
	backend, err := binding.Open(ctx, binding.Loan{Regions: []contract.SlotRegion{mem.Region}, Hold: hold}, driver, cfg)
	if err != nil {
		select {
		case <-hold.released: // nothing stays lent
			return nil, errors.Join(err, mem.Free())
		default: // *binding.LiveRegistrationError: keep the memory
			return nil, err
		}
	}
	return &lender{mem: mem, backend: backend}, nil
}

// guide:end

// guide:close
// close gives everything back (Backend.Close runs the owner's order and
// closes the driver), then frees the memory. What is still held is kept,
// never freed; the error says what and why.
func (l *lender) close(ctx context.Context) error {
	if err := l.backend.Close(ctx); err != nil {
		return err // errors.Is: context.DeadlineExceeded, or binding.ErrHeldForGood
	}
	return l.mem.Free()
}

// guide:end

// A region built from memory the engine mapped itself is valid geometry,
// and a region of device memory is not served by a driver that cannot
// reach it: Open refuses, and the hold comes back.
func Example_regions() {
	mem, err := memdrv.Alloc(4096, 8, contract.Host)
	if err != nil {
		panic(err)
	}
	defer mem.Free()
	host := stagingRegion(mem.Region.Base, 8, 4096)
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
