package conformance

import (
	"reflect"
	"runtime"
)

// suiteCall runs f: every driver call and hook call of the suite runs
// under it, so that a callback can tell whether it was called on the
// goroutine of such a call (see onSuiteCall).
//
//go:noinline
func suiteCall(f func()) { f() }

// suiteCallEntry is the entry address of suiteCall.
var suiteCallEntry = reflect.ValueOf(suiteCall).Pointer()

// onSuiteCall reports whether the calling goroutine is running a call
// the suite made (a driver call or a hook): a callback the driver makes
// synchronously, inside Put, Drain or a hook, must never be held up,
// since the suite's own call would wait for it.
func onSuiteCall() bool {
	pcs := make([]uintptr, 1024)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Entry == suiteCallEntry {
			return true
		}
		if !more {
			return n == len(pcs) // a stack too deep to see its bottom: assume so
		}
	}
}
