package conformance

import (
	"errors"
	"sync"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// Deviations of batches of regions built over memdrv, beside the broken
// drivers of memdrv/broken: a driver that asks about one region of a
// batch other than the last.

// busyFirstOnly answers nil to UnregisterRegions of a busy batch whose
// first region is idle: it asks about the first region alone, as
// broken.TogetherBusyLastOnly asks about the last. The batch stays
// registered.
type busyFirstOnly struct {
	*memdrv.TogetherDriver
	mu      *sync.Mutex
	batches map[contract.Registration]contract.SlotRegion // the first region of each batch
}

func (d busyFirstOnly) RegisterRegions(specs []contract.RegionSpec) (contract.Registration, error) {
	reg, err := d.TogetherDriver.RegisterRegions(specs)
	if err == nil && len(specs) > 0 {
		d.mu.Lock()
		d.batches[reg] = specs[0].Region
		d.mu.Unlock()
	}
	return reg, err
}

func (d busyFirstOnly) UnregisterRegions(reg contract.Registration) error {
	err := d.TogetherDriver.UnregisterRegions(reg)
	if !errors.Is(err, memdrv.ErrRegionBusy) {
		return err
	}
	d.mu.Lock()
	first, ok := d.batches[reg]
	d.mu.Unlock()
	if n := d.RowsIn(first); ok && n.Queued+n.Running+n.Unprovable == 0 {
		return nil
	}
	return err
}

// elsewhereCatches: a batch whose middle region is busy, answered by a
// driver that asks about the first region alone.
func elsewhereCatches() []catch {
	return []catch{{
		name: "regions/together-busy-first-only",
		deviant: togetherDeviant(func(d *memdrv.TogetherDriver) contract.Driver {
			return busyFirstOnly{d, new(sync.Mutex), map[contract.Registration]contract.SlotRegion{}}
		}),
		control:   memHarness(memdrv.Options{}, true),
		check:     "together-busy/get",
		violation: "(the middle of the batch's 3) has access open",
	}}
}
