// Package mooncake exports a Mooncake driver's counters
// (mooncakedrv.Stats) as OpenTelemetry metrics, beside the backend's
// (package telemetry), through the metric API only.
//
// [Observe] makes observable instruments on the provider's kvshare meter
// and registers one callback that reads the driver's Stats() at
// collection time: rows by direction (put, get) and final status, the
// ledger (keys left open, put rows declined because their key was left
// open), rows whose access is unprovable, SDK calls and panics recovered
// around the SDK. The telemetry module's README lists them with their
// units and kinds.
//
// It promises what package telemetry does: nothing on the driver's path
// (observable instruments only, read when a reader collects), one
// Stats() snapshot per collection, every direction and final status
// observed (zeros too), the caller's attributes on every point, and
// arguments refused with telemetry.ErrArgument.
//
// # Decisions
//
//   - It is a package of its own so that package telemetry stays free of
//     mooncakedrv (and so of purego and the TOML parser): only a program
//     that runs a Mooncake driver imports this one.
//   - Of the driver's counters it exports what an operator acts on: the
//     rows (with direction, which the backend's figures lack), the ledger
//     (keys left open only grow, and each one is a key this driver never
//     writes again), rows kept for good, and the SDK's calls and panics.
//     Parts, operations and keys being written now are left out: they
//     describe the driver's inner pacing and are in Stats() for tests and
//     logs.
//   - keys_left_open and rows_unprovable are up-down counters (levels of
//     what is held now, that add up across drivers) though they only
//     grow; the rest are counters.
package mooncake
