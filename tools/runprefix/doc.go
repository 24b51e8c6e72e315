// Package runprefix gives one run of a kvshare job a key prefix of its
// own: base/job/run, where run is the run's start time (UTC, to the
// second) and eight random hex digits, for example
// "kvshare/roundtrip/20261129t191821z-9f3a04c2".
//
// # Why
//
// A Mooncake put never overwrites: a put of a key that already holds an
// object answers 0, and the driver confirms it Ready without storing a
// byte. A job that wrote under the same keys on every run would, from
// its second run on, "publish" nothing and fetch the first run's bytes,
// and its figures would measure nothing. A prefix per run makes every
// run store what it reports.
//
// # Decisions
//
//   - The time makes runs sort by when they ran (a pool's keys can be
//     listed and cleaned by prefix); the random part keeps two runs in
//     one second apart. Lower-case letters only, so the prefix is the
//     same whatever the locale.
//   - An empty base means [DefaultBase]. The result is checked with the
//     key rules of package keys (keys.NewStem), so a base that breaks
//     them, or one so long that the run's prefix would pass
//     keys.MaxPrefixBytes, is refused here, before any store is opened.
//   - The objects a run stores stay in the store: the store config's
//     client (mooncakesdk.Client) has no remove call, so cleaning them is
//     the pool's eviction or its operator's business.
package runprefix
