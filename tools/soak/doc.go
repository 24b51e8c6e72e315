// Package soak runs kvshare for a while under random traffic and checks
// that nothing is lost or kept: several backends (lenders) over one store
// publish, fetch, cancel and shut down at random, seeded and
// reproducible; every fetched byte is checked against what its name
// stands for, and at the end every backend's counters of lent rows and
// bytes are back at zero, every region is unregistered, every hold was
// released and every mapping was freed. `kvshare soak` runs it; `go run
// mage.go soak` runs it for ten minutes (one with -short, which CI runs).
//
// # How it works
//
// A row's bytes are a function of its name (content), so any lender can
// check a fetched row without knowing who published it, and publishing a
// name twice stores the same bytes (a put never overwrites). Each lender
// runs rounds: it picks one to three attempts at random — a publish of
// fresh or known names, a fetch of names published before (and a few
// never published, which must Miss) — on disjoint slots of its region,
// cancels some right after submitting, waits for every attempt to
// quiesce, then checks each delivered row of a fetch byte for byte. Now
// and then it shuts its backend down in the owner's cleanup order,
// checks that nothing is held, closes the driver and binds the same
// memory again over a new driver.
//
// # Decisions
//
//   - One goroutine per lender, rounds strictly one after another within
//     a lender: slots are reused only after their attempt quiesced, as
//     the contract demands, and the check needs no locking.
//   - A fetch's undelivered rows are not checked (their slots are
//     undefined after a Fault, untouched after a Miss); a delivered row
//     must be byte-identical, whatever attempt or lender published it.
//   - Names are drawn from a fixed space per run (prefix/seed/index), so
//     fetches find what other lenders published; the published set is
//     shared under a mutex.
//   - The soak fails at the first thing that breaks a promise (a
//     mismatch, an attempt that does not quiesce within the wait, a
//     label left after Shutdown, a lent counter not back at zero) and
//     reports it with the seed that reproduces the run.
package soak
