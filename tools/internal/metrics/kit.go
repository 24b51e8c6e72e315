package metrics

import (
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/redisdrv"
	"github.com/kvshare/kvshare/telemetry/drivermetrics"
)

// kitOf returns the driver kit under d, whose figures every driver on
// the kit exports: d itself where its methods are the kit's (memdrv,
// diskdrv), the embedded kit of a Mooncake or Redis driver (whose own
// Stats shadows the kit's). ok is false for a driver not on the kit.
func kitOf(d contract.Driver) (kit drivermetrics.Driver, ok bool) {
	switch d := d.(type) {
	case *mooncakedrv.Driver:
		if d == nil {
			return nil, false
		}
		return d.Driver, true
	case *redisdrv.Driver:
		if d == nil {
			return nil, false
		}
		return d.Driver, true
	case drivermetrics.Driver:
		return d, true
	}
	return nil, false
}
