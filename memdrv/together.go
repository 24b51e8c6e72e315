package memdrv

import (
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
)

// TogetherDriver is a [Driver] that also implements
// [contract.RegionsTogether] ([drivekit.Together]): it registers a batch
// of regions under one handle. It embeds *Driver, so it has the scenario
// hooks too.
type TogetherDriver struct {
	*Driver
}

var _ contract.RegionsTogether = (*TogetherDriver)(nil)

// NewTogether returns a TogetherDriver over s with the options o.
func NewTogether(s *Store, o Options) *TogetherDriver {
	return &TogetherDriver{Driver: New(s, o)}
}

// RegisterRegions is [drivekit.Together.RegisterRegions]: the whole
// batch is validated before anything is registered, then registered
// under one handle. A failure staged with
// [TogetherDriver.FailNextRegistration] comes after the validation.
func (d *TogetherDriver) RegisterRegions(specs []contract.RegionSpec) (contract.Registration, error) {
	return drivekit.Together{Driver: d.Driver.Driver}.RegisterRegions(specs)
}

// UnregisterRegions is [drivekit.Together.UnregisterRegions]: while any
// region of the batch is busy it fails with an error wrapping
// [contract.ErrDriverRejected] and [ErrRegionBusy], and the whole batch
// stays registered.
func (d *TogetherDriver) UnregisterRegions(reg contract.Registration) error {
	return drivekit.Together{Driver: d.Driver.Driver}.UnregisterRegions(reg)
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
