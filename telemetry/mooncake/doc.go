// Package mooncake exports a Mooncake driver's figures under the names
// kvshare.mooncake.*, as OpenTelemetry metrics, beside the backend's
// (package telemetry), through the metric API only.
//
// Deprecated: kept for one release; use telemetry/drivermetrics, whose
// kvshare.driver.* instruments carry the same figures for every driver
// on the kit (the Mooncake store's own as kvshare.driver.store.*). The
// kvshare.mooncake.* names are removed in the release after the next.
//
// [Observe] makes observable instruments on the provider's kvshare meter
// and registers one callback that reads the driver kit's Stats() and
// the store's Counters() at collection time: rows by direction (put,
// get) and final status, the ledger (keys left open, put rows declined
// because their key was left open), rows whose access is unprovable,
// SDK calls and panics recovered around the SDK. The telemetry module's
// README.md lists them with their units and kinds; their names, units,
// descriptions and values are those of the releases before.
//
// It promises what package telemetry does: nothing on the driver's path
// (observable instruments only, read when a reader collects), one
// snapshot per collection, every direction and final status observed
// (zeros too), the caller's attributes on every point, and arguments
// refused with telemetry.ErrArgument.
//
// It reads the kit (drivekit), never mooncakedrv: the telemetry module
// pulls in no Mooncake SDK, purego or TOML parser for it.
package mooncake
