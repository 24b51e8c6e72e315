// Package metrics serves kvshare's OpenTelemetry metrics (module
// telemetry) in Prometheus text format over HTTP while a kvshare command
// runs: `kvshare roundtrip --metrics 127.0.0.1:PORT`, and the same for
// `kvshare bench`.
//
// [Serve] listens on an address, builds an OpenTelemetry SDK meter
// provider whose one reader is OpenTelemetry's Prometheus exporter, and
// serves the exporter's registry at [Path] with prometheus/client_golang's
// handler; [Endpoint.URL] says where. [Endpoint.Observe] registers a
// lender's backend (and its driver, when it is on the driver kit: the
// kvshare.driver.* figures with driver="<its name>", and a Mooncake
// driver's legacy kvshare.mooncake.* names for one release) on that
// provider, and [Endpoint.Observer] makes the hook that roundtrip's and
// bench's options take; the figures are read from Stats() at each
// scrape. [Endpoint.Close] stops serving.
//
// It promises that the endpoint serves kvshare's figures (and the
// exporter's target_info) only, from a registry of its own, not
// whatever else the process registered; that each lender's points carry
// lender="<name>", so two lenders in one process stay apart; and that
// any host:port is accepted, port 0 picking a free port.
//
// Why the exporter lives here and not in module telemetry is in
// docs/design/tools.md (section "The metrics endpoint"); the telemetry
// module's README.md lists the metrics.
package metrics
