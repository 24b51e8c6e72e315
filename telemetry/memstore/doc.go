// Package memstore exports the embedded in-memory store's figures
// (memdrv.StoreStats) as OpenTelemetry metrics, beside the backends'
// (package telemetry), through the metric API only.
//
// [Observe] makes observable instruments on the provider's kvshare meter
// and registers one callback that reads the store's Stats() at
// collection time: the capacity taken up front and the memory in use,
// the objects and their bytes, the objects evicted to make room (and
// their bytes), and the puts declined. The telemetry module's README.md
// lists them with their units and kinds.
//
// It promises what package telemetry does: nothing on the store's path
// (observable instruments only, read when a reader collects), one
// Stats() snapshot per collection, the caller's attributes on every
// point, and arguments refused with telemetry.ErrArgument.
//
// A store is shared by every driver made on it, so it is observed once,
// not once per lender. Only a program that runs the embedded store
// imports this package, so package telemetry stays free of memdrv.
package memstore
