// Package modules is the one list of kvshare's Go modules and of the
// outside consumers that take them by version.
//
// Everything that needs to know the modules reads [Repo]: go.work (a check
// that it uses exactly these folders), the dependency rules (each entry's
// Imports), the release (every entry is tagged), the module proxy that
// dist writes (every entry is published) and the table of modules,
// docs/modules.md. A module that is not listed here is a failure of
// those checks, never forgotten by one of them.
//
// Its consumers are modules outside the workspace (not in go.work, no
// replace) that require kvshare modules by version, the way a team takes
// them; CI builds, vendors and runs each one against a proxy made from
// the repository.
//
// A module added after a release is required, by its siblings and by the
// consumers that use it, at the next release's version: the version
// every other module moves to when that release is made.
//
// # The table of modules
//
// [List.WriteDoc] (`go run mage.go modulesdoc`) writes [DocFile]: per
// module and per consumer, the first sentence of its package comment
// (the doc.go of the module's root package, so the table cannot say
// other than the package does), the modules its packages import and
// every module they pull in. Those come from `go list -deps`, not from
// the list's Imports: each module alone (GOWORK=off) with its Tags, each
// consumer in a temporary workspace with every module, all for
// linux/amd64 with cgo whatever the machine, the standard library and
// tests left out. A test of this package renders the table
// again and fails while [DocFile] differs by a byte.
//
// The list's Imports are checked both ways, so they say what the table
// says: build/deps fails on a package a module imports, directly or
// not, that no entry covers, and [List.CheckUsed] (a test here) on an
// entry that covers no such package.
//
// A doc.go that says what its package imports says it in the one form
// that [Claim] describes, naming every module the package pulls in,
// directly or not; [List.CheckClaims] (a test here) holds each such
// sentence to the package's imports, and refuses one in another form.
package modules
