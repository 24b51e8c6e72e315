// Package roundtrip is kvshare's main job: a KV round trip through the
// embedded in-memory store, the way an engine would use kvshare.
//
// Two lenders each own one host region of staging slots (memory outside
// the Go heap) and lend it, under a hold, to their own backend over their
// own in-memory driver; both drivers share one store, as two engine
// processes would share a Mooncake pool. The first lender fills its slots
// with reproducible pseudo-random bytes and publishes them in views of a
// few dozen rows, all submitted at once; the second fetches the same names
// into its own slots. Every byte is compared.
//
// A run ends with the owner's cleanup order for each lender: Shutdown
// answers no labels, the binding releases the hold once every region is
// confirmed unregistered, the driver is closed, and only then is the
// memory unmapped. If anything is still held, the memory is kept and the
// run reports it instead of freeing it.
//
// Decisions: the published rate counts only rows the outcomes mark
// delivered; the run's timeout bounds the moves, and cleanup gets a bound
// of its own (30 s) so that cancelled attempts can still quiesce before
// their memory goes back.
package roundtrip
