// Package gpuroundtrip moves a request's KV pages between two staging
// lenders on a GPU, through kvshare's backend and a store, and checks
// them byte for byte; a host-memory stand-in for the device runs the
// same round trip on machines without a GPU.
//
// [Device] is device memory, pinned host memory and synchronous copies
// each way; [OpenGPU] opens a GPU through the CUDA runtime (package
// cudart, and NVML through package gpus when built with the nvml tag),
// and [HostDevice] is the stand-in. A [Lender] is an engine's KV cache
// manager on one device: Layers × Blocks pages of BlockBytes in device
// memory, and one region of as many pinned slots, lent under its hold to
// a backend ([binding.Bind], [binding.New]) over its own driver. A
// [LeaseHolder] leases the slots, submits, waits for quiescence, marks
// what arrived and releases the slots. [Run] is the round trip (device →
// staging → store → staging → device); its [Report] gives GB/s each way,
// copy and store apart, the device, and why the stand-in ran if it did.
//
// A view has one group per layer, each the layer's blocks in order: slot
// layer×Blocks + block holds that block, and page (layer, block) sits at
// offset (layer×Blocks + block)×BlockBytes, so one copy moves a layer
// each way. [Request.Name] names a block by the request's ID, layer and
// block; the backend makes the store key from the name.
//
// It promises:
//
//   - The resume bound ([contract.View.ResumeBound]) is the number
//     of leading blocks that arrived in every layer, never the outcome's
//     Prefix over the whole view; a fetch copies to the device only the
//     blocks below it.
//   - Slots go back to the lender only after their attempt quiesced; a
//     lease holder whose context ends cancels the attempt, and the lease
//     stays out until it quiesces (maybe never).
//   - The owner's cleanup order, per lender: Shutdown answers no labels,
//     the driver is closed, then staging and pages are freed. What a
//     store may still touch is kept and reported ([ErrKept]), never freed.
//   - Every CUDA call runs on one goroutine locked to its OS thread; a
//     missing library or symbol is an error, never a panic.
//
// It refuses shapes that are not positive, over 2^31 slots or over 1 TiB
// a lender ([ErrConfig], naming the field); a key prefix package keys
// refuses; lending from a closed lender ([ErrLenderClosed]); and, with
// [GPURequired], a machine without a usable GPU ([ErrNoGPU], saying why;
// [GPUIfPresent], the default, runs the stand-in instead).
//
// The decisions behind it are in docs/design/gpuroundtrip.md; how to
// run it, on a CPU or a GPU, is in the module's README.md.
package gpuroundtrip
