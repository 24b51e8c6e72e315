package mooncakesdk

import (
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/storeconfig"
)

// The errors of this package. Each is wrapped with a reason naming what
// was wrong (the file, section and key; the variable; the symbol; the
// address); match them with [errors.Is].
var (
	// ErrConfig: a store config was refused. The error is a
	// [*ConfigError] (or several joined) naming the file, section and key.
	// It is storeconfig.ErrConfig, which every store's refusals match.
	ErrConfig = storeconfig.ErrConfig
	// ErrEnvironment: an environment variable asks the library for a mode
	// that breaks the driver's proofs. The error names the variable.
	ErrEnvironment = errors.New("mooncakesdk: environment refused")
	// ErrLibrary: the library could not be loaded, or lacks one of the
	// nineteen functions of store_c.h (each missing name is listed).
	ErrLibrary = errors.New("mooncakesdk: library not usable")
	// ErrLibraryHash: the config pins the library's SHA-256 (sdk_sha256)
	// and the file's hash is not in the list.
	ErrLibraryHash = errors.New("mooncakesdk: library hash not pinned")
	// ErrMaster: the master did not accept a TCP connection before the
	// wait ended. The error names the address.
	ErrMaster = errors.New("mooncakesdk: master not reachable")
	// ErrSetup: creating or setting up the client failed. The handle, if
	// one was created, has been destroyed (or will be, once a setup that
	// outlived the caller's context returns); no other call reached it.
	ErrSetup = errors.New("mooncakesdk: client setup failed")
	// ErrInvalidArgument: a call's arguments are malformed (lengths
	// differ, a key holds a NUL byte, a buffer address is 0 for a non-empty
	// size). Found before the store was called: nothing was touched and no
	// result was written.
	ErrInvalidArgument = errors.New("mooncakesdk: invalid argument")
	// ErrCallFailed: the library answered a failure for the whole call.
	// The error is a [*CallError] carrying the function and its answer.
	// For a batch call this is the -1 of a NULL argument or an escaped
	// exception: no per-key result was written, and whether any transfer
	// ran is unknown.
	ErrCallFailed = errors.New("mooncakesdk: call failed")
	// ErrClosed: the client was destroyed; the library was not called.
	ErrClosed = errors.New("mooncakesdk: client destroyed")
	// ErrUnhealthy: the health check answered something other than
	// healthy (not initialised or closed, or master unreachable).
	ErrUnhealthy = errors.New("mooncakesdk: client unhealthy")
)

// CallError is a library function's failing answer for a whole call.
// It matches [ErrCallFailed] with errors.Is.
type CallError struct {
	// Func is the C function, e.g. "mooncake_store_register_buffer".
	Func string
	// Code is its answer.
	Code Code
}

// Error names the function and its answer.
func (e *CallError) Error() string {
	return fmt.Sprintf("mooncakesdk: %s answered %v", e.Func, e.Code)
}

// Is reports whether target is [ErrCallFailed].
func (e *CallError) Is(target error) bool { return target == ErrCallFailed }
