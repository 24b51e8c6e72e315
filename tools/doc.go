// Module tools holds kvshare's commands: cmd/kvshare (the kvshare
// command) and the jobs behind it: roundtrip (the main job, through the
// embedded in-memory store or a Mooncake pool), doctor (checks a store
// config and the pool it names), bench (kvshare bench: kvshare against
// floors measured in the same run, with plots), soak (random traffic for
// a while, every promise checked), runprefix (a key prefix per run,
// since a Mooncake put never overwrites), metrics (the --metrics
// endpoint of roundtrip and bench: module telemetry's instruments in
// Prometheus text). It may import every other module of the workspace.
//
// # Dependencies beyond the workspace, and why
//
//   - github.com/ebitengine/purego: doctor loads the Mooncake library
//     to check its symbols, as mooncakesdk does.
//   - github.com/stretchr/testify: the tests' assertions (the project's
//     test library).
//   - gonum.org/v1/plot (and what it pulls in: fonts, the SVG and PNG
//     back ends): kvshare bench --plot draws its figures with it. It is
//     the maintained Go plotting library, pure Go (no cgo, no
//     toolchain), writes SVG and PNG from one description, and draws
//     error bars, log axes and aligned panels, which the benchmark's
//     figures need.
//   - github.com/schollz/progressbar/v3: kvshare bench's progress bar on
//     stderr, when stderr is a terminal and --json is not given. A
//     maintained library (throttled redraws, clearing on finish, time
//     left) instead of a hand-drawn carriage-return line.
//   - go.opentelemetry.io/otel/sdk/metric, go.opentelemetry.io/otel/exporters/prometheus
//     and github.com/prometheus/client_golang (promhttp): --metrics. The
//     telemetry module instruments against the OpenTelemetry API only;
//     a program picks the SDK and an exporter, and these are
//     OpenTelemetry's own SDK and Prometheus exporter, which turn the
//     instruments' names and units into Prometheus's as any engine's
//     exporter would, served by Prometheus's own HTTP handler.
//     github.com/prometheus/common (expfmt) parses the scrapes in the
//     tests.
//
// Only the kvshare command links these: no other module imports tools.
package tools
