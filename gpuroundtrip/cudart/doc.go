// Package cudart binds the CUDA runtime API (libcudart.so) with purego:
// no cgo, no link-time dependency, the library found at run time.
//
// [Runtime] is one device of the CUDA runtime: device selection, device
// memory ([Runtime.Alloc], [Runtime.Free]), pinned host memory
// ([Runtime.AllocHost], [Runtime.FreeHost]), synchronous copies each way
// ([Runtime.CopyToDevice], [Runtime.CopyToHost]), [Runtime.Synchronize],
// the device's PCI bus id ([Runtime.PCIBusID]), and the runtime's errors
// as text ([Error]).
//
// It promises:
//
//   - Loading never panics. The library comes from [Options.Library],
//     else $KVSHARE_CUDART, else [DefaultLibraries] in order through the
//     loader's search path. Every symbol is looked up with purego.Dlsym
//     before any is registered; a library that cannot be loaded, or
//     lacks one, is an error wrapping [ErrLibrary] that names each file
//     tried or each symbol missing.
//   - Every CUDA call runs on one goroutine locked to its OS thread, the
//     runtime's owner, where the device was selected at Open; callers on
//     any goroutine are served one at a time.
//   - A code other than cudaSuccess is an [*Error] naming the call, the
//     code, and the runtime's own name and text for it.
//   - Memory this runtime did not allocate is never passed to cudaFree or
//     cudaFreeHost ([ErrNotAllocated]), and a copy's device range must lie
//     inside one of its allocations ([ErrBadArgument]); neither reaches
//     the runtime.
//
// It refuses calls after Close ([ErrClosed]), sizes that are not
// positive, and device ordinals the runtime does not report
// ([ErrNoDevice]). It never unloads the library and never resets the
// device.
//
// Why (the owner thread, synchronous copies, portable pinned memory,
// names from NVML, the fake runtime the tests build) is in
// docs/design/gpuroundtrip.md.
package cudart
