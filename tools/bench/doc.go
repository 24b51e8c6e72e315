// Package bench is `kvshare bench`: the benchmark the design this
// project ports promised, in Go. Every goal is a ratio of kvshare to a
// floor measured in the same run, reported as the median of several
// repetitions with its spread (smallest and largest); absolute times are
// context, since the machines it runs on are shared and noisy. It
// measures and never asserts a time.
//
// # What it measures
//
//  1. Submission to settle (the seed's CPU benchmark). A fake SDK
//     (mooncakesdk/fakesdk) whose data calls all sleep 1 ms; a Mooncake
//     driver with 4 workers, 256 rows and 128 MiB a call, under a
//     binding.Backend. Shapes 1×256, 4×256 (submitted at once) and
//     1×4096 rows, fetches alone and fetches beside publishes of as many
//     rows, each shape at a fixed submission rate. Reported: mean, p50
//     and p99 from submission to settle (the outcome known and the
//     attempt quiesced), the submit call's p99, the time from the first
//     submission to the first SDK call, the process CPU a submission.
//     The floor: the same SDK calls (a put part is its put and the
//     exists-check confirming it) made by as many bare goroutines, gets
//     before puts, keys and buffers built before the clock starts; its
//     ticks take turns with kvshare's, one by one. Goals: mean settle at
//     most 1.10× the floor's (1×256, 1×4096) and 1.15× (4×256).
//  2. The busy engine loop. A goroutine locked to a thread of its own
//     does steady small work items, counting them per 10 ms window:
//     alone, beside the floor's traffic, beside kvshare's (measurement
//     1's ticks, the shapes in turn, fetches beside publishes). Reported:
//     the fraction of its alone-rate it keeps, its stalls (gaps over
//     1 ms between two items), and the process CPU a submission less the
//     loop thread's own (getrusage RUSAGE_SELF − RUSAGE_THREAD). Goals:
//     kvshare's keep-rate at least 0.98 of the floor's, and no more
//     stalls than the floor's traffic causes.
//  3. CPU and allocation a row of backend and driver, over a fake SDK
//     that answers at once, at 64 KiB rows: the process CPU (getrusage)
//     and the heap allocation (runtime.MemStats) of a block of
//     submissions, less those of a block of the same calls straight to
//     the fake. Goals: at most 100 ns and ~0 B a row (at most 2 B: the
//     outcome's Delivered, a bool a row that the caller keeps, is
//     allocated per submission by design).
//  4. Bandwidth against the physical limit. Publish then fetch through
//     the in-memory store (memdrv: slot → store → slot, two copies of
//     every byte) against the same two copies made with copy by as many
//     goroutines, at 64 KiB, 256 KiB, 1 MiB and 4 MiB rows. Goal: at
//     least 0.8 of the copy floor's round-trip rate at each size.
//  5. A real Mooncake pool, only when given one: a store config
//     (--store) or a Mooncake folder to start a loopback pool from
//     (--mooncake-dir, with package pool of mooncakedrv); otherwise one
//     line says it was skipped. The sizes of 4, in GB/s each way,
//     counting only rows that came back Ready, against a raw loop of the
//     same C ABI calls on the same client, with nothing of kvshare
//     between. Goal: at least 0.95 of the raw loop each way.
//
// # Decisions
//
//   - Both sides of a comparison use the same store, the same objects
//     and the same kind of staging memory (anonymous mmap, every page
//     touched before the clock starts). Which side goes first changes
//     with every repetition (in 1, with every tick).
//   - In 1 and 3 the rows a publish puts are already stored, so the
//     store answers them at once (Mooncake never overwrites, and the
//     driver's exists-check then confirms them Ready): the fake copies
//     no bytes for a publish, on either side. The fetched objects are
//     published before the clock starts. 4 KiB rows in 1 and 2 keep the
//     fake's copying small beside the 1 ms calls.
//   - In 1 a tick waits for everything it submitted before the next
//     tick; a tick that starts late (the one before overran its period)
//     starts at once. The period is 2.5× the least time the tick's calls
//     can take on the workers, at least 4 ms.
//   - The floor of 1 has no cap on puts (the driver keeps one worker
//     for gets), but it takes gets before puts when both wait.
//   - 3 and 4 run a collection before each block or round, outside the
//     clock, so a side never pays for the other's garbage; a side's own
//     garbage collection is its cost.
//   - 4's in-memory store keeps each object in the Go heap (a fresh
//     allocation a row); its floor copies into buffers allocated and
//     touched once. The difference is the store's, and is what the
//     ratio shows.
//   - 5 warms the provider's segment first (rows put until the segment
//     is full or its size is stored, then removed), stores every round
//     under fresh keys of the run's own prefix (package runprefix: a
//     put never overwrites) and removes them after the round (forced:
//     exists-checks and gets leave read leases).
//   - Measurements that cannot run to the end (a row that never came
//     back Ready where every row must, a pool that will not start) end
//     the run with an error; the report holds what ran before.
package bench
