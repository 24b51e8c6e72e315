// Package soak runs kvshare for a while under random traffic and checks
// that nothing is lost or kept: several backends (lenders) over one store
// publish, fetch, cancel and shut down at random, seeded and
// reproducible. `kvshare soak` runs it; `go run mage.go soak` runs it for
// ten minutes (one with -short, which CI runs).
//
// [Run] takes a [Config] (start from [Defaults] or [Short]) and returns a
// [Report] of what it did and checked. A row's bytes are a function of
// its name, so any lender can check a fetched row whoever published it.
// Each lender runs rounds of one to three attempts on disjoint slots (a
// publish of fresh or known names, a fetch of published names and a few
// never published), cancels some, waits for every attempt to quiesce and
// checks each delivered row; now and then it shuts its backend down,
// closes the driver and binds the same memory again over a new one.
//
// It checks, and fails at the first that breaks:
//
//   - every delivered row of a fetch is byte-identical to what its name
//     stands for, and no name that was never published is delivered;
//   - every attempt quiesces within [Config.Wait];
//   - no label is left after Shutdown, and every backend's lent rows and
//     bytes are back at zero;
//   - at the end every region is unregistered, every hold released and
//     every mapping freed.
//
// A failure names what broke and the seed ([Config.Seed]) that
// reproduces the run's choices. [Config.Validate] refuses settings out
// of range.
//
// How a round is built, and why, is in docs/design/tools.md (section "The
// soak"); the flags are in the tools module's
// README.md.
package soak
