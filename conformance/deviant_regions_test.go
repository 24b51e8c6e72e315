package conformance

import (
	"errors"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// Deviations of registration and Close built over memdrv: batches of
// regions validated, revoked or kept busy wrongly, and a Close that
// never refuses.

// togetherDeviant builds TogetherDrivers wrapped by wrap.
func togetherDeviant(wrap func(*memdrv.TogetherDriver) contract.Driver) Harness {
	return Harness{New: func() (*Subject, error) {
		s := memdrv.NewStore()
		d := memdrv.NewTogether(s, quiet(memdrv.Options{}))
		return memSubject(wrap(d), d.Driver, s), nil
	}}
}

// partialBatches registers the good regions of a batch and drops the
// bad ones, instead of refusing the whole batch.
type partialBatches struct{ *memdrv.TogetherDriver }

func (d partialBatches) RegisterRegions(specs []contract.RegionSpec) (contract.Registration, error) {
	var good []contract.RegionSpec
	for _, s := range specs {
		if s.Validate() == nil {
			good = append(good, s)
		}
	}
	return d.TogetherDriver.RegisterRegions(good)
}

// batchesRevokeNothing answers nil to UnregisterRegions and revokes
// nothing.
type batchesRevokeNothing struct{ *memdrv.TogetherDriver }

func (batchesRevokeNothing) UnregisterRegions(contract.Registration) error { return nil }

// busyBatchesLie answers nil to UnregisterRegions of a busy batch, which
// stays registered.
type busyBatchesLie struct{ *memdrv.TogetherDriver }

func (d busyBatchesLie) UnregisterRegions(reg contract.Registration) error {
	if err := d.TogetherDriver.UnregisterRegions(reg); !errors.Is(err, memdrv.ErrRegionBusy) {
		return err
	}
	return nil
}

// regionCatches: batches of regions validated, revoked or kept busy
// wrongly, and a Close that never refuses.
func regionCatches() []catch {
	var out []catch
	for _, c := range []struct {
		check     string
		wrap      func(*memdrv.TogetherDriver) contract.Driver
		violation string
	}{
		{"together-validates", func(d *memdrv.TogetherDriver) contract.Driver { return partialBatches{d} },
			"RegisterRegions of a batch with a region of short Len succeeded"},
		{"together-revokes", func(d *memdrv.TogetherDriver) contract.Driver { return batchesRevokeNothing{d} },
			"admitted, want refused with ErrDriverRejected: its region's batch was unregistered"},
		{"together-busy", func(d *memdrv.TogetherDriver) contract.Driver { return busyBatchesLie{d} },
			"UnregisterRegions succeeded while an operation covering region"},
	} {
		out = append(out, catch{
			name: "regions/" + c.check, deviant: togetherDeviant(c.wrap), control: memHarness(memdrv.Options{}, true),
			check: c.check, violation: c.violation,
		})
	}
	h := deviantHarness(func(d *memdrv.Driver) contract.Driver { return closesAnyTime{d} }, memdrv.Options{})
	return append(out, catch{
		name: "close-any-time", deviant: h, control: memHarness(memdrv.Options{}, false),
		check: "close", violation: "Close succeeded before any Drain",
	})
}

// closesAnyTime answers nil to every Close, closing nothing.
type closesAnyTime struct{ *memdrv.Driver }

func (closesAnyTime) Close() error { return nil }
