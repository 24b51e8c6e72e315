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
	hold    *stagingHold
	driver  contract.Driver // opened by the caller, closed by the caller, last
	backend *binding.Backend
}

// lend maps staging memory (slots slots of slotBytes each) and lends it,
// under a hold, to a backend over driver.
func lend(driver contract.Driver, cfg binding.Config, slots int, slotBytes int64) (*lender, error) {
	mem, err := memdrv.Alloc(slotBytes, slots, contract.Host)
	if err != nil {
		return nil, err
	}
	hold := &stagingHold{released: make(chan struct{})}
	regions, err := binding.Bind(driver, []contract.SlotRegion{mem.Region}, hold)
	if errors.Is(err, contract.ErrConstructionRejected) {
		// Nothing was left registered and the hold is released.
		return nil, errors.Join(err, mem.Free())
	}
	if err != nil {
		// A registration may be live (*binding.LiveRegistrationError):
		// the hold is kept, and so is the memory.
		return nil, err
	}
	backend, err := binding.New(regions, cfg)
	if err != nil {
		// A bad config (binding.ErrConfig): the regions are still ours.
		if uerr := regions.Unbind(context.Background()); uerr != nil {
			return nil, errors.Join(err, uerr) // still held: keep the memory
		}
		return nil, errors.Join(err, mem.Free())
	}
	return &lender{mem: mem, hold: hold, driver: driver, backend: backend}, nil
}

// guide:end

// guide:close
// close gives everything back in the owner's order: Shutdown answers no
// labels (the binding has drained the driver, unregistered the region
// and released the hold), then the driver is closed, last, and only then
// is the memory freed. Whatever is still held is kept, never freed.
func (l *lender) close(ctx context.Context) error {
	if held := l.backend.Shutdown(ctx); len(held) > 0 {
		return fmt.Errorf("still held, memory kept: %v", held)
	}
	if err := l.driver.Close(); err != nil {
		return err
	}
	return l.mem.Free()
}

// guide:end

// A region built from memory the engine mapped itself is valid geometry,
// and a region of device memory is not served by a driver that cannot
// reach it.
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
	_, err = binding.Bind(driver, []contract.SlotRegion{device}, hold)
	fmt.Println("construction rejected:", errors.Is(err, contract.ErrConstructionRejected))
	<-hold.released
	fmt.Println("hold released by the binding")
	// Output:
	// host region: <nil>
	// construction rejected: true
	// hold released by the binding
}
