// Package roundtrip is kvshare's main job: a KV round trip through a
// store, the way an engine would use kvshare, through the embedded
// in-memory store ([MemoryStore], the default: a bounded cache taken up
// front, sized for the run or as a [memory] store file says,
// [MemoryStoreFile]), a Mooncake pool that a store config file describes
// ([MooncakeStore]) or a Redis server that a store file describes
// ([RedisStore]).
//
// Two lenders each own one host region of staging slots (memory outside
// the Go heap) and lend it, under a hold, to their own backend over their
// own driver; both drivers are clients of one [Store], as two engine
// processes would share a Mooncake pool or a Redis server. The first
// lender fills its slots with reproducible pseudo-random bytes
// ([Config.Seed]) and publishes them in views of a few dozen rows, all
// submitted at once; the second looks them up, then fetches
// the same names into its own slots. Every byte is compared. [Run]
// returns a [Report]: each [Phase]'s rows, bytes and rate, mismatches,
// rows undelivered, and what is still lent.
//
// It promises:
//
//   - The owner's cleanup order for each lender: Shutdown answers no
//     labels, the binding releases the hold once every region is
//     confirmed unregistered, the driver is closed (a Mooncake driver's
//     Close destroys its client, a Redis driver's closes its client), and
//     only then is the memory unmapped.
//     Anything still held is kept and reported, never freed.
//   - Rates count only rows the outcomes mark delivered, and a fetched
//     row the fetch never wrote cannot pass the byte check.
//   - Every run stores under a key prefix of its own (package runprefix),
//     so it never meets an earlier run's objects; they stay in the pool
//     afterwards.
//   - The run's timeout bounds the moves and opening the drivers;
//     cleanup has a bound of its own (30 s).
//
// [RunEngine] is one engine process of the round trip through a node
// (`kvshare roundtrip --node`): it lends its slots to the node as a
// memfd through package nodeclient and publishes ([Publisher]), or
// looks up and fetches what is present and checks every byte
// ([Fetcher]); its [EngineReport] is what it moved.
//
// Over a Mooncake pool, Config.Floor measures the raw floor in the same
// run ([Floor], package poolfloor: the same rows in the same calls
// straight on a client of the pool, before and after the job), and
// [Mooncake.WarmFirst] fills and empties a fresh pool before anything is
// measured ([Report].Warmed).
//
// It refuses a [Config] out of range ([Config.Validate]) and a store
// config the Mooncake SDK or the Redis driver refuses.
//
// Why it is built this way (two clients of a pool in one process, mmap
// staging, the fetcher's slots filled before the clock starts) is in
// docs/design/tools.md (section "The main job (roundtrip)"); the flags are
// in the tools module's README.md.
package roundtrip
