// Package conformance is the driver conformance suite: [Run] checks that
// a [contract.Driver] keeps the driver rules of package contract, the way
// [testing/fstest.TestFS] checks a file system. A driver's own test calls
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, conformance.Harness{New: newSubject})
//	}
//
// [Harness] says how to build a fresh [Subject] (the driver and the
// scenario hooks the harness can stage on it) and sets the suite's knobs;
// only New is required. Every check runs as a subtest named after it, on
// a fresh driver, so `go test -run 'TestConformance/extents'` runs one
// (Harness.Only does the same from code). [Checks] lists them, with what
// each proves and what each needs.
//
// The suite promises:
//
//   - Every finding is reported, not only the first, each naming the
//     operation, the row or slot, and the rule it breaks.
//   - A check that cannot stage its point (a capability not declared, a
//     hook missing, a driver state it cannot prove) skips with the reason:
//     a skip is never a pass in disguise. Run ends by logging a summary of
//     what passed, failed, skipped or was left out, and why.
//   - A broken driver fails rather than hangs: every wait, driver call
//     and hook call is bounded by Harness.Wait, and the suite never sleeps
//     and then asserts.
//   - Every snapshot, every onChange and every Drain is held to the
//     rules (after a false one, Put, Get and Lookup must be refused), and
//     memory and the names lent are watched after their access ended (a
//     lookup's, after it returned), so a late write, a late callback or a
//     name read late shows.
//   - A driver that implements [contract.Looker] is held to its rules
//     (the lookup checks; a driver without it skips them, saying so), and
//     every lookup the suite makes to one Presence per name; after every
//     Close, a lookup must be refused.
//   - The suite never frees memory an admitted operation may still touch:
//     memory whose release it cannot justify stays mapped for the life of
//     the process, and the check says which and why.
//
// The suite lends host memory only, mapped with syscall.Mmap, so it
// builds on Unix systems only; Device regions are host memory so
// labelled, lent only with Harness.LendDevice to a driver that declares
// DeviceMemory. It stores keys under Harness.KeyPrefix, which may hold no
// NUL byte, and never deletes them; the keys come from a key maker of
// its own, so no driver can lean on a key grammar. It never sends a batch
// over MaxRowsPerOp.
//
// The module's README.md is the driver author's guide: the harness and
// its hooks, names and keys, every check with what it proves and needs,
// the summary, the promises in full and the suite's own tests. Where the
// contract is silent, the suite's choices and their reasons are in
// docs/design/conformance.md.
package conformance
