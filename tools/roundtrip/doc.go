// Package roundtrip is kvshare's main job: a KV round trip through a
// store, the way an engine would use kvshare — through the embedded
// in-memory store by default, or through a Mooncake pool that a store
// config file describes ([MooncakeStore]).
//
// Two lenders each own one host region of staging slots (memory outside
// the Go heap) and lend it, under a hold, to their own backend over their
// own driver; both drivers are clients of one store, as two engine
// processes would share a Mooncake pool. The first lender fills its slots
// with reproducible pseudo-random bytes and publishes them in views of a
// few dozen rows, all submitted at once; the second fetches the same names
// into its own slots. Every byte is compared.
//
// A run ends with the owner's cleanup order for each lender: Shutdown
// answers no labels, the binding releases the hold once every region is
// confirmed unregistered, the driver is closed (a Mooncake driver's Close
// destroys its client), and only then is the memory unmapped. If anything
// is still held, the memory is kept and the run reports it instead of
// freeing it.
//
// Decisions:
//
//   - The published rate counts only rows the outcomes mark delivered;
//     the run's timeout bounds the moves (and opening the drivers), and
//     cleanup gets a bound of its own (30 s) so that cancelled attempts
//     can still quiesce before their memory goes back.
//   - Every run stores under a key prefix of its own,
//     Config.KeyPrefix/roundtrip/<UTC time>-<random> (package
//     runprefix). Mooncake never overwrites: a put of a key that already
//     holds an object answers 0 and the driver confirms it Ready, so a
//     second run under the first run's keys would publish nothing, fetch
//     the first run's bytes (equal, for the same seed) and report a rate
//     that measured nothing. With a prefix per run, every Ready put
//     stored its bytes in this run. The objects stay in the pool
//     afterwards (the SDK client has no remove call): the pool's
//     eviction reclaims them, or, with eviction off, they fill it.
//   - With a Mooncake pool each lender's driver comes from
//     mooncakedrv.Open: two clients of the pool in one process, each
//     with its own transfer engine and ports. This works on the real
//     pool (checked with two clients set up one after the other, a put
//     through one and the get through the other, byte for byte); the
//     drivers' worker count is the config's [mooncake] workers, and the
//     backends' caps are its [blob] rows_per_call and bytes_per_call.
//   - The staging memory is memdrv.Alloc's (anonymous mmap), whatever the
//     store: it is host memory outside the Go heap, which is what a
//     Mooncake client registers.
//   - Before the clock starts, the fetcher's slots are filled with 0xA5:
//     a row the fetch never wrote cannot pass the byte check by chance
//     (fresh mmap memory is zeros), and every page is touched, as an
//     engine's long-lived staging memory is, so the fetch rate measures
//     the transfer and not first-touch page faults (the publisher's
//     pages are touched by writing its bytes).
package roundtrip
