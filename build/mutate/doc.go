// Package mutate is kvshare's mutation testing (`go run mage.go
// mutate`): gremlins (pinned, [Gremlins]) run package by package on a
// snapshot of the workspace, with each module's efficacy — killed ÷
// (killed + lived), equivalent mutants aside — its counts and every lived
// mutant printed, and a failure when a module is under the goal or a
// mutant lives in a guarded area ([Guards]: the verdict mapper, the
// ledger, access-end evidence, admission, result recording).
//
// How it runs: the workspace's modules are copied to a temporary folder
// (edits made during a long run change nothing), the module under test
// with its relative replaces made absolute; every go command runs with
// GOWORK=off, -count=1 and -vet=off; one gremlins run per package; every
// process gets 4 GiB of address space at most, so a mutant that loops
// allocating dies, killed. A go shim (package goshim) stands in front of
// the go command and adds to the coverage profile the case lists of
// switches that ran, which Go's profile leaves out and gremlins would
// otherwise call not covered.
//
// Equivalent mutants — a lived mutant that changes nothing anyone can
// observe — are listed with why in a mutants.txt beside the package's
// code, one entry a mutant whose first line reads
//
//   - `file.go` in `function`: `code` (MUTATOR, ...): why
//
// (code: the text of the mutated line that holds the mutated operator).
// They count as equivalent, not lived; an entry that no mutant matched is
// warned about. The reasons for these choices are in docs/design/testing.md
// ("Mutation testing").
package mutate
