// Package metrics serves kvshare's OpenTelemetry metrics (module
// telemetry) in Prometheus text format over HTTP while a kvshare command
// runs: `kvshare roundtrip --metrics 127.0.0.1:PORT`.
//
// [Serve] listens on an address, builds an OpenTelemetry SDK meter
// provider whose one reader is OpenTelemetry's Prometheus exporter, and
// serves the exporter's registry at /metrics with prometheus/client_golang's
// handler. [Endpoint.Observe] registers a lender's backend (and its
// Mooncake driver, when it is one) on that provider; the figures are
// read from Stats() at each scrape.
//
// # Decisions
//
//   - The exporter lives here, in tools, and nowhere else: the telemetry
//     module stays on the OpenTelemetry API, and an engine chooses its
//     own exporter. OpenTelemetry's Prometheus exporter (rather than a
//     hand-written text writer) makes the names and units the
//     OpenTelemetry conventions give them into Prometheus's
//     (kvshare.rows {row} becomes kvshare_rows_total), the same way an
//     engine's own exporter would.
//   - A registry of its own, not Prometheus's default: the endpoint
//     serves kvshare's figures (and the exporter's target_info), not
//     whatever else the process registered.
//   - Any host:port is accepted; the commands document 127.0.0.1. Port 0
//     picks a free port, which [Endpoint.URL] reports.
//   - Each lender's points carry lender="<name>", so two lenders in one
//     process (the round trip's publisher and fetcher) stay apart.
package metrics
