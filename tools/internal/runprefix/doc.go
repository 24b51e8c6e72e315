// Package runprefix gives one run of a kvshare job a key prefix of its
// own: base/job/run, where run is the run's start time (UTC, to the
// second) and eight random hex digits, for example
// "kvshare/roundtrip/20261129t191821z-9f3a04c2".
//
// A Mooncake put never overwrites: a put of a key that already holds an
// object answers 0, and the driver confirms it Ready without storing a
// byte. A job that wrote under the same keys on every run would, from
// its second run on, "publish" nothing and fetch the first run's bytes.
// A prefix per run makes every run store what it reports.
//
// [New] makes the prefix; an empty base means [DefaultBase]. The result
// is checked with the key rules of package keys, so a base that breaks
// them, or one so long that the run's prefix would pass
// keys.MaxPrefixBytes, is refused before any store is opened. Prefixes
// sort by when their runs started, and are lower-case whatever the
// locale. A run's objects stay in the store. The Redis driver's put (SET
// NX) never overwrites either, so the same holds there.
//
// The reasons for the form are in docs/design/tools.md (section "A key
// prefix per run (runprefix)").
package runprefix
