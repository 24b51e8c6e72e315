package mooncakesdk

import (
	"runtime"

	"github.com/ebitengine/purego"
)

// dlopen loads a shared library. The loader's reason for a failure is
// per OS thread (dlerror), and purego reads it in a second call, so the
// goroutine stays on one thread across both: otherwise the reason may
// be read on another thread and come back empty.
func dlopen(name string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
}
