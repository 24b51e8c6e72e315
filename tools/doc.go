// Module tools holds the kvshare command, cmd/kvshare, and the jobs
// behind it, each a package under internal/ because only the command
// uses them:
//
//   - roundtrip: the main job, a KV round trip through the embedded
//     in-memory store, a Mooncake pool, a Redis server or a Redis
//     Cluster, every byte checked;
//   - doctor: checks a store file and the pool, server or cluster it
//     names, or a running node, one line a check;
//   - bench: kvshare against floors measured in the same run, with plots;
//   - soak: random traffic for a while, every promise checked;
//   - metrics: the --metrics endpoint of roundtrip, bench and node, module
//     telemetry's instruments in Prometheus text;
//   - runprefix: a key prefix per run, since neither a Mooncake put nor
//     the Redis driver's SET NX overwrites;
//   - storefile: which store a store file is for ([mooncake], [redis] or
//     [memory]), and its [node] section;
//   - poolconfig and realpool: a loopback pool's store config, for the
//     real-pool tests and the benchmark's own pool;
//   - redisconfig: a loopback Redis server's or Redis Cluster's store
//     file, for --redis-server (and --redis-cluster) and the Redis tests;
//   - slotmap: a Redis Cluster's slot map, for the doctor's coverage
//     check and the benchmark's floor, which sends each key to its node.
//
// The module may import every other module of the workspace; no module
// imports it, so only the command links its dependencies beyond the
// workspace: purego (the doctor's library check), rueidis (the Redis
// client: the doctor's own client, and the benchmark's floor over the
// same client options the driver uses), gonum.org/v1/plot
// (bench --plot), schollz/progressbar (bench's progress bar), and
// OpenTelemetry's SDK and Prometheus exporter with Prometheus's HTTP
// handler (--metrics); testify and prometheus/common in tests.
//
// How to run each command is in the module's README.md; what each job
// decides, and why each dependency, in docs/design/tools.md.
package tools
