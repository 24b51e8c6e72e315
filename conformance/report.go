package conformance

import "testing"

// reporter is what a check reports through. Run backs it with
// *testing.T; the package's own tests back it with a recorder, so that
// they can see which check reported which finding.
//
// Fatalf and Skipf end the check's goroutine (runtime.Goexit), as their
// testing.T namesakes do; Cleanup functions run after the check ends,
// last registered first.
type reporter interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	Cleanup(func())
	// Run runs f as a named sub-check and reports whether it passed.
	Run(name string, f func(reporter)) bool
}

// testReporter is a reporter over *testing.T.
type testReporter struct{ *testing.T }

func (r testReporter) Run(name string, f func(reporter)) bool {
	r.Helper()
	return r.T.Run(name, func(t *testing.T) { f(testReporter{t}) })
}
