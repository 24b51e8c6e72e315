//go:build !cgo

package gpus

import "fmt"

// Discover has no NVML in a build without cgo: it answers an error
// wrapping [ErrNoGPU] that says so.
func Discover() (Machine, error) {
	return Machine{}, fmt.Errorf("%w: built without cgo (CGO_ENABLED=0), so NVML cannot be asked", ErrNoGPU)
}
