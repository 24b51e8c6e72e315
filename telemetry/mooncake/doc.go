// Package mooncake exports a Mooncake driver's counters
// (mooncakedrv.Stats) as OpenTelemetry metrics, beside the backend's
// (package telemetry), through the metric API only.
//
// [Observe] makes observable instruments on the provider's kvshare meter
// and registers one callback that reads the driver's Stats() at
// collection time: rows by direction (put, get) and final status, the
// ledger (keys left open, put rows declined because their key was left
// open), rows whose access is unprovable, SDK calls and panics recovered
// around the SDK. The telemetry module's README.md lists them with their
// units and kinds.
//
// It promises what package telemetry does: nothing on the driver's path
// (observable instruments only, read when a reader collects), one
// Stats() snapshot per collection, every direction and final status
// observed (zeros too), the caller's attributes on every point, and
// arguments refused with telemetry.ErrArgument.
//
// Only a program that runs a Mooncake driver imports it, so package
// telemetry stays free of mooncakedrv (and of purego and the TOML
// parser). What it exports and leaves out, and why, is in
// docs/design.md (section "Metrics (telemetry)").
package mooncake
