//go:build !cgo || !nvml

package gpus

import "fmt"

// Discover has no NVML in this build (it is built only with cgo and the
// nvml build tag, so that the default build compiles no C): it answers
// an error wrapping [ErrNoNVML] that says how to get it.
func Discover() (Machine, error) {
	return Machine{}, fmt.Errorf("%w: built without the nvml tag (go build -tags nvml, with cgo)", ErrNoNVML)
}
