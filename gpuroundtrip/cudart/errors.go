package cudart

import (
	"errors"
	"fmt"
)

var (
	// ErrLibrary means the CUDA runtime library could not be used: no
	// candidate could be loaded, or the one loaded lacks a function this
	// package calls. The error names every file tried, or every symbol
	// missing.
	ErrLibrary = errors.New("cudart: CUDA runtime library unusable")
	// ErrNoDevice means the runtime loaded but there is no device to use:
	// no device at all, a driver too old for the runtime, or a device
	// index out of range.
	ErrNoDevice = errors.New("cudart: no usable CUDA device")
	// ErrClosed is returned by every call after [Runtime.Close].
	ErrClosed = errors.New("cudart: runtime closed")
	// ErrNotAllocated is returned by Free and FreeHost for memory this
	// runtime did not allocate, or already freed: handing the CUDA
	// runtime such a pointer is undefined, so it is never passed on.
	ErrNotAllocated = errors.New("cudart: memory not allocated by this runtime")
	// ErrBadArgument is a size or range the runtime is never asked about:
	// a size that is not positive, or a copy that would leave an
	// allocation.
	ErrBadArgument = errors.New("cudart: bad argument")
)

// CUDA runtime error codes this package tells apart (cudaError_t).
const (
	codeSuccess            = 0
	codeInsufficientDriver = 35
	codeNoDevice           = 100
	codeInvalidDevice      = 101
)

// Error is a CUDA runtime call that answered something other than
// cudaSuccess: the call, its code, and the runtime's own name and text
// for the code (cudaGetErrorName, cudaGetErrorString).
type Error struct {
	Call string // e.g. "cudaMalloc(1048576)"
	Code int
	Name string // e.g. "cudaErrorMemoryAllocation"
	Text string // e.g. "out of memory"
}

// Error returns "cudart: <call>: <name> (<code>): <text>".
func (e *Error) Error() string {
	return fmt.Sprintf("cudart: %s: %s (%d): %s", e.Call, e.Name, e.Code, e.Text)
}

// Is reports whether the code means there is no usable device
// (cudaErrorNoDevice, cudaErrorInsufficientDriver, cudaErrorInvalidDevice),
// so that errors.Is(err, ErrNoDevice) holds for them.
func (e *Error) Is(target error) bool {
	if target != ErrNoDevice {
		return false
	}
	switch e.Code {
	case codeNoDevice, codeInsufficientDriver, codeInvalidDevice:
		return true
	}
	return false
}
