package memdrv

import (
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// TogetherDriver is a [Driver] that also implements
// [contract.RegionsTogether]: it registers a batch of regions under one
// handle. It embeds *Driver, so it has the scenario hooks too.
type TogetherDriver struct {
	*Driver
}

var _ contract.RegionsTogether = (*TogetherDriver)(nil)

// NewTogether returns a TogetherDriver over s with the options o.
func NewTogether(s *Store, o Options) *TogetherDriver {
	return &TogetherDriver{Driver: New(s, o)}
}

// RegisterRegions validates the whole batch before anything is
// registered: an empty batch, a driver draining or closed, Device memory
// without DeviceMemory, or bad geometry (the error wraps
// [contract.ErrInvalidRegion] too and names the label) fail with an
// error wrapping [contract.ErrDriverRejected] and register nothing.
// Otherwise every region is registered under one handle. A failure
// staged with [TogetherDriver.FailNextRegistration] comes after the
// validation.
func (d *TogetherDriver) RegisterRegions(specs []contract.RegionSpec) (contract.Registration, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(specs) == 0 {
		if err := d.usableLocked("register regions"); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("%w: memdrv: register regions: no regions", contract.ErrDriverRejected)
	}
	rs := make([]contract.SlotRegion, len(specs))
	labels := make([]string, len(specs))
	for i, s := range specs {
		rs[i], labels[i] = s.Region, s.Label
	}
	if err := d.checkRegionsLocked("register regions", rs, labels); err != nil {
		return 0, err
	}
	if live := d.scene.failBatch; live != nil {
		d.scene.failBatch = nil
		if *live {
			h := d.registerLocked(true, rs...)
			return 0, &contract.RegistrationError{Registration: h, Err: ErrStagedFailure}
		}
		return 0, &contract.RegistrationError{Err: ErrStagedFailure}
	}
	return d.registerLocked(true, rs...), nil
}

// UnregisterRegions revokes a handle from RegisterRegions. While any
// region of the batch is busy (an operation with access Open or
// Unprovable has a span in it) it fails with an error wrapping
// [contract.ErrDriverRejected] and [ErrRegionBusy], and the whole batch
// stays registered. Handles are treated as by [Driver.Unregister]; a
// handle from Register is refused.
func (d *TogetherDriver) UnregisterRegions(reg contract.Registration) error {
	return d.unregister("unregister regions", reg, true)
}

// FailNextRegistration makes the next RegisterRegions that passes
// validation fail with a [*contract.RegistrationError] wrapping
// [ErrStagedFailure]. With live, the batch is registered for real and
// the error carries its handle, which must be revoked; without, nothing
// is registered and the error's handle is zero.
func (d *TogetherDriver) FailNextRegistration(live bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.scene.failBatch = &live
}
