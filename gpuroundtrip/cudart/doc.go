// Package cudart binds the CUDA runtime API (libcudart.so) with purego:
// no cgo, no link-time dependency, the library found at run time.
//
// # What it owns
//
// [Runtime]: one device of the CUDA runtime — device selection, device
// memory ([Runtime.Alloc], [Runtime.Free]), pinned host memory
// ([Runtime.AllocHost], [Runtime.FreeHost]), synchronous copies each way
// ([Runtime.CopyToDevice], [Runtime.CopyToHost]), [Runtime.Synchronize],
// and the runtime's errors as text ([Error]).
//
// # What it promises
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
// # What it refuses
//
// Calls after Close ([ErrClosed]); sizes that are not positive; device
// ordinals the runtime does not report ([ErrNoDevice]). It never unloads
// the library (the runtime's threads may still run its code) and never
// resets the device (other users in the process keep their state).
//
// # Decisions
//
//   - The owner goroutine exits locked at Close, so its thread, which
//     the CUDA runtime has made its own, ends instead of going back to
//     Go's pool. A panic inside a call (purego refusing an argument) is
//     recovered on the owner and returned to the caller as an error.
//   - Copies are synchronous cudaMemcpy: the staging memory is pinned, so
//     they run at the bus's rate, and a synchronous copy has no stream
//     whose lifetime must be tracked against the store's access.
//   - Pinned memory is allocated cudaHostAllocPortable, pinned for every
//     context, since a store may register it from threads of its own.
//   - Device names come from NVML (package gpus), not from
//     cudaGetDeviceProperties, whose struct changes between CUDA versions;
//     [Runtime.PCIBusID] lets a caller match the two.
//   - The tests prove the binding against a fake libcudart.so that they
//     build with gcc (testdata/fakecudart): allocations in host memory,
//     copies checked for kind and range, scripted errors, a missing
//     symbol, and the thread of every call.
package cudart
