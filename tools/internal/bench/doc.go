// Package bench is `kvshare bench`: kvshare against floors measured in
// the same run. Every goal is a ratio of kvshare to its floor, reported
// as the median of [Options.Reps] repetitions with its spread (smallest
// and largest); absolute times are context, since the machines it runs
// on are shared and noisy. It measures and never asserts a time.
//
// [Run] runs the measurements [Options] asks for (start from [Defaults]
// or [Short]) and judges every goal; [WriteTable] and [Summary] print
// the [Report], which is also what --json encodes, and [WritePlot] draws
// its figures ([Plottable] says whether there are any). The measurements
// ([Measurement], numbered as below):
//
//  1. Submission to settle over a fake SDK whose data calls sleep 1 ms,
//     shapes 1×256, 4×256 and 1×4096, against the same SDK calls made by
//     bare goroutines and, beside publishes, by a floor that follows the
//     driver's scheduler rules (the same calls on a scheduler pool).
//     Goal: mean settle at most 1.10× the floor's, the rule-following
//     floor's beside publishes (1.15× at 4×256); what the rules cost,
//     that floor over the bare goroutines, is reported beside it.
//  2. A busy engine loop on a thread of its own, beside the floor's
//     traffic and beside kvshare's. Goal: keep at least 0.98 of the
//     floor's keep-rate, with no more stalls over 1 ms.
//  3. CPU and heap allocation a row of backend and driver over a fake
//     that answers at once, less the same calls straight to the fake.
//     Goal: at most 100 ns and 2 B a row.
//  4. Publish then fetch through the in-memory store against the same
//     two copies made with copy. Goal: at least 0.8 of the copy floor.
//  5. A real Mooncake pool, only when given one (--store, or
//     --mooncake-dir), against a raw loop of the same C ABI calls cut as
//     the driver cuts them (goal: 0.95 each way); and kvshare shaped as
//     `kvshare roundtrip` submits against one call per 256 rows (goal:
//     0.9 each way).
//  6. Lookup of 1, 256 and 4096 names, stop at first and every row, over
//     memdrv, the Mooncake driver on the fake SDK and a pool when given
//     one (with a context that can end, and one that cannot), against
//     the same calls made directly. Goal: ≤ 1.10× the floor; memdrv ≤ 100 ns a name.
//  7. A Redis server or cluster, only when given one (--store, or
//     --redis-server, with --redis-cluster a three-node cluster): publish
//     then fetch of 64 KiB to 4 MiB rows through the Redis driver against
//     the same commands pipelined on a raw client of the same options
//     (over a cluster, one pipeline a node). Goal: 0.90 each way. With
//     --redis-server a cluster also runs beside the server: cluster /
//     one node is reported, with no goal.
//  8. The node beside the in-process path over one embedded store: 1×256
//     and 1×4096 publish and fetch against a socketpair round trip of
//     the same frames (goal: added latency ≤ 1.5× it); 1 MiB rows'
//     throughput (goal: 0.9 of in-process).
//  9. The disk tier (a [disk] store file's directory, or a temporary
//     one): publish and fetch of 64 KiB, 256 KiB and 1 MiB rows against
//     open + one pwrite / pread a row of the same bytes from the same
//     memory, the page cache dropped before every fetch (goal: 0.9 each
//     way); a lookup of 4096 names against a stat a name (goal: ≤ 1.0×).
//
// Both sides of a comparison use the same store, objects and kind of
// staging memory, and take turns going first. A measurement that cannot
// run to the end ends the run with an error (the report holds what ran
// before); a missed goal is a finding, not an error. Each measurement's
// floor and decisions: docs/design/tools.md ("The benchmark (bench)" and on);
// figures: BENCHMARKS.md; flags: the tools module's README.md.
package bench
