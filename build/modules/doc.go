// Package modules is the one list of kvshare's Go modules and of the
// outside consumers that take them by version.
//
// Everything that needs to know the modules reads [Repo]: go.work (a check
// that it uses exactly these folders), the dependency rules (each entry's
// Imports), the release (every entry is tagged) and the module proxy that
// dist writes (every entry is published). A module that is not listed
// here is a failure of those checks, never forgotten by one of them.
//
// Its consumers are modules outside the workspace (not in go.work, no
// replace) that require kvshare modules by version, the way a team takes
// them; CI builds, vendors and runs each one against a proxy made from
// the repository.
//
// A module added after a release is required, by its siblings and by the
// consumers that use it, at the next release's version: the version
// every other module moves to when that release is made.
package modules
