// Package drivermetrics exports the counters of any driver built on the
// driver kit (drivekit.Stats, and the store's own drivekit.Counter
// values) as OpenTelemetry metrics: the same instrument names for every
// store, the driver's name as the [DriverKey] attribute.
//
// [Observe] makes observable instruments on the provider's kvshare meter
// and registers one callback that reads the driver's Stats() and
// Counters() once per collection: operations, rows by direction and
// final status, store calls, panics, shared calls, unprovable rows,
// recycles, keys being written and lookups (names kvshare.driver.*),
// and each of the store's own counters as kvshare.driver.store.<name>.
// The telemetry module's README.md lists them with their units and
// kinds.
//
// It imports the kit and never a driver: a program over memdrv, diskdrv
// or redisdrv pulls in no Mooncake SDK, purego or TOML parser for its
// metrics. A driver on the kit embeds *drivekit.Driver; pass that
// (drv.Driver), which is a [Driver] even where the driver's own Stats
// shadows the kit's.
//
// It promises what package telemetry does: nothing on the driver's path
// (observable instruments only, read when a reader collects), one
// snapshot per collection, every direction and final status observed
// (zeros too), the caller's attributes on every point, and arguments
// refused with telemetry.ErrArgument.
package drivermetrics
