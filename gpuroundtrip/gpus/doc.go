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
// Nothing else: it only reads. NVML is compiled in only with cgo and the
// nvml build tag (go build -tags nvml): go-nvml's C wrappers print pages
// of compiler warnings on their first build, which a default build of
// the kvshare command must not. Without the tag, Discover answers an
// error wrapping [ErrNoNVML], and callers find the GPU through the CUDA
// runtime alone.
package gpus
