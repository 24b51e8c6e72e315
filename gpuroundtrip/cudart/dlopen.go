package cudart

import (
	"errors"
	"runtime"

	"github.com/ebitengine/purego"
)

// dlopen loads a shared library. The loader's reason for a failure is
// per OS thread (dlerror), and purego reads it in a second call, so the
// goroutine stays on one thread across both: otherwise the reason may
// be read on another thread and come back empty. An empty reason is
// still named.
func dlopen(name string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil && err.Error() == "" {
		err = errors.New("the loader gave no reason")
	}
	return h, err
}
