// Package gpus finds the machine's NVIDIA GPUs through NVML, with
// go-nvml (github.com/NVIDIA/go-nvml), which needs cgo.
//
// # What it owns
//
// [Discover]: whether there is a GPU, and for each its index, name, UUID,
// memory and PCI bus id, plus the driver's version.
//
// # What it promises
//
//   - After a failed nvml.Init no other NVML function is called, not even
//     Shutdown or ErrorString (go-nvml's ErrorString calls into the
//     library once it is loaded): with the library missing, any other
//     call kills the process (a symbol lookup error, exit status 127).
//     The failure is named from a table of this package's own.
//   - "Library not found" and "driver not loaded" from Init, and a
//     driver that reports no device, mean there is no GPU: the error
//     wraps [ErrNoGPU]. Any other failure is an error that does not.
//   - Every successful Init is matched by one Shutdown.
//
// # What it refuses
//
// Nothing else: it only reads. A build without cgo (CGO_ENABLED=0) has
// no NVML at all; Discover then answers an error wrapping [ErrNoGPU]
// that says so, and the module still builds.
//
// # Decisions
//
//   - go-nvml is imported only in files built with cgo, so that the rest
//     of gpuroundtrip builds without a C compiler.
//   - Discovery goes through nvml.Interface, so the tests can hand it
//     go-nvml's own mocks (an H200 server; an Init that fails with every
//     other function left unset, which panics if called).
package gpus
