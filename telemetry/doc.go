// Package telemetry exports a kvshare backend's counters as
// OpenTelemetry metrics, through the OpenTelemetry metric API only; its
// subpackage drivermetrics does the same for any driver on the driver
// kit (the same names for every store, the store as an attribute),
// memstore for the embedded store's figures, nodemetrics for a kvshare
// node's (each engine labelled by its declared name), and mooncake
// keeps a Mooncake driver's legacy names for one release. No other
// kvshare module imports it.
//
// [Observe], given a metric.MeterProvider and a backend (anything with
// Stats() contract.Stats, such as *binding.Backend), makes observable
// instruments on the provider's kvshare meter ([ScopeName]) and
// registers one callback that reads Stats() at collection time: attempts
// started and open, rows by direction and final status, calls in flight
// and unprovable, rows and bytes lent now, the oldest call's age, and
// whether a driver broke the protocol. The module's README.md lists the
// instruments with their units, kinds, attributes and Prometheus names,
// and what to watch.
//
// It promises:
//
//   - Nothing on the submit path. Only observable instruments are made;
//     the one callback is the only code that reads the backend, and it
//     runs when a reader collects. A Fetch or Publish makes no call into
//     the metric API.
//   - One snapshot per collection: every instrument of a registration is
//     observed from a single Stats() call, so the figures of one
//     collection agree with each other.
//   - Every final status is observed, zeros included, so each series
//     exists from the first collection; Pending never is.
//   - The caller's attributes reach every point. Unregister stops the
//     callback: the backend is never read again through it.
//
// It refuses a nil provider or backend, and attributes that are not
// valid, given twice, or keyed "status" or "direction" (the instruments'
// own): each an error wrapping [ErrArgument], with nothing made or
// registered. It does not refuse two registrations on one provider with
// the same attributes, which it cannot see: give each backend its own.
//
// The program picks the SDK and the exporter; the tests use the SDK's
// manual reader. Why the instruments are split, named and kinded as they
// are is in docs/design/telemetry.md.
package telemetry
