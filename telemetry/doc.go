// Package telemetry exports a kvshare backend's counters as
// OpenTelemetry metrics, through the OpenTelemetry metric API only; its
// subpackage mooncake does the same for a Mooncake driver's ledger and
// rows. No other kvshare module imports it.
//
// # What it owns
//
// [Observe]: given a metric.MeterProvider and a backend (anything with
// Stats() contract.Stats, such as *binding.Backend), it makes observable
// instruments on the provider's kvshare meter ([ScopeName]) and
// registers one callback that reads Stats() at collection time. The
// instruments, with their units, kinds and attributes, are listed in the
// module's README.md: attempts started and open, rows by final status,
// calls in flight and unprovable, rows and bytes lent now, the oldest
// call's age, and whether a driver broke the protocol.
//
// # What it promises
//
//   - Nothing on the submit path. Only observable instruments are made;
//     the one callback is the only code that reads the backend, and it
//     runs when a reader collects. A Fetch or Publish makes no call into
//     the metric API (a test spies on every call to prove it).
//   - One snapshot per collection: every instrument of a registration is
//     observed from a single Stats() call, so the figures of one
//     collection agree with each other (rows lent and calls in flight
//     come from the same instant).
//   - Every final status is observed, zeros included, so each series
//     exists from the first collection (a rate over it needs no special
//     case); Pending never is.
//   - The caller's attributes reach every point. Unregister stops the
//     callback: the backend is never read again through it.
//
// # What it refuses
//
// A nil provider or backend, and attributes that are not valid, given
// twice, or keyed "status" or "direction" (the instruments' own): each
// an error wrapping [ErrArgument], with nothing made or registered.
//
// # Decisions
//
//   - The backend's rows carry direction and status: contract.Stats
//     splits them (PublishRows, FetchRows), and the direction's value is
//     the contract's word for it, "put" for a publish and "get" for a
//     fetch, as on the driver's instruments.
//   - The backend's kvshare.rows and the driver's kvshare.mooncake.rows
//     are separate instruments, not one with more attributes: they count
//     different things (the backend counts rows never handed to the
//     driver as Cancelled and a call refused as a whole as Fault; the
//     driver counts only rows it admitted), so summing them over one
//     instrument would double count.
//   - Kinds follow the figures: totals that only grow are counters;
//     levels that add up across backends (attempts open, calls in flight
//     or unprovable, rows and bytes lent) are up-down counters; the
//     oldest call's age and the violation flag, which do not add up, are
//     gauges. Calls unprovable only grow in practice, but they are what
//     is held now, beside rows lent, so they are a level.
//   - Names follow OpenTelemetry's conventions: a kvshare namespace,
//     dotted components, snake_case words within one, curly-brace units
//     for counts ({row}, {call}), By for bytes, s for seconds, and no
//     name that is also another's namespace (kvshare.rows is a metric, so
//     rows lent are kvshare.lent.rows). The attribute keys are the
//     issue's plain status and direction; values are the strings of
//     contract.RowStatus and contract.Direction ("not-ready", "get").
//   - The Mooncake instruments live in a subpackage so that this one
//     imports only contract and the metric API: an engine on memdrv, or
//     another driver, that exports its backend's figures links no
//     purego, no TOML parser and no Mooncake code.
//   - The result is the API's own metric.Registration: callers already
//     know it, and it is all there is to undo (OpenTelemetry cannot
//     remove an instrument from a meter; an unregistered one reports no
//     points).
//   - Two backends on one provider are told apart by the caller's
//     attributes; telemetry cannot see another registration's, so it
//     does not refuse a clash, it documents it.
//
// # Dependencies
//
// go.opentelemetry.io/otel/metric, the API, and what it brings
// (go.opentelemetry.io/otel/attribute and its hash): the API is what a
// library instruments against, leaving the SDK, the exporters and their
// configuration to the program that owns the process (the engine, or
// kvshare's tools). The SDK (go.opentelemetry.io/otel/sdk/metric, with
// its manual reader) is used by the tests only, to collect for real;
// testify as everywhere else. binding, memdrv and fakesdk appear in
// tests only, to produce real figures.
package telemetry
