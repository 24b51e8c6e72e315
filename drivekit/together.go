package drivekit

import "github.com/kvshare/kvshare/contract"

// Together is a [Driver] that also implements
// [contract.RegionsTogether]: it registers a batch of regions under one
// handle. A store that registers a whole address window at once is
// served by it; [Driver] alone does not offer it, since the backend
// finds it by type assertion.
type Together struct {
	*Driver
}

var _ contract.RegionsTogether = Together{}

// RegisterRegions validates the whole batch before anything is
// registered: an empty batch, a driver draining, recycling or closed,
// Device memory without DeviceMemory, or bad geometry (the error wraps
// [contract.ErrInvalidRegion] too and names the label) fail with an
// error wrapping [contract.ErrDriverRejected] and register nothing.
// Otherwise the store keeps the batch ([Regions.Keep], together) and
// every region is registered under one handle.
func (t Together) RegisterRegions(specs []contract.RegionSpec) (contract.Registration, error) {
	return t.registerRegions(specs)
}

// UnregisterRegions revokes a handle from RegisterRegions. While any
// region of the batch is busy (an operation with access Open or
// Unprovable has a span in it) it fails with an error wrapping
// [contract.ErrDriverRejected] and [ErrRegionBusy], and the whole batch
// stays registered. Handles are treated as by [Driver.Unregister]; a
// handle from Register is refused.
func (t Together) UnregisterRegions(reg contract.Registration) error {
	return t.unregister("unregister regions", reg, true)
}
