// Package nodemetrics exports a kvshare node's figures (node.Stats) as
// OpenTelemetry metrics, beside the backends' (package telemetry),
// through the metric API only.
//
// [Observe] makes observable instruments on the provider's kvshare meter
// and registers one callback that reads the node's Stats() at
// collection time. For the whole node: the engines attached now and the
// sessions welcomed since the start, the connections refused because
// their peer may not attach, the lends and bytes lent now, the attempts
// in flight (accepted, not quiesced), the lends and bytes the node holds
// for good (access not proven ended), the attempts accepted and the
// requests refused, and the reclaims. For each engine attached now: its
// sessions, lends, bytes lent, attempts in flight and bytes held,
// labelled engine=<the name its hello declared> — not its connection, so
// that a series outlives a reconnect; engines that declare one name are
// summed into one series, and an engine's series ends when it detaches.
// The telemetry module's README.md lists the instruments with their
// units and kinds.
//
// It promises what package telemetry does: nothing on the node's path
// (observable instruments only, read when a reader collects), one
// Stats() snapshot per collection, the caller's attributes on every
// point, and arguments refused with telemetry.ErrArgument (the key
// "engine" is the instruments' own).
//
// Only a program that runs a node imports this package, so package
// telemetry stays free of module node.
package nodemetrics
