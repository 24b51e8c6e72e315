// Package gpuroundtrip moves a request's KV pages between two staging
// lenders on a GPU, through kvshare's backend and a store, and checks
// them byte for byte; a host-memory stand-in for the device runs the
// same round trip on machines without a GPU.
//
// # What it owns
//
//   - [Device]: device memory, pinned host memory, synchronous copies
//     each way. [OpenGPU] opens a GPU: NVML (package gpus, go-nvml) says
//     whether there is one and names it, the CUDA runtime (package
//     cudart, libcudart through purego) serves it. [HostDevice] is the
//     stand-in: "device" memory and "pinned" memory both mapped outside
//     the Go heap, copies checked against its allocations as the
//     runtime's are.
//   - [Lender]: an engine's KV cache manager on one device. Its KV pages
//     are Layers × Blocks pages of BlockBytes in device memory; its
//     staging slots are one region of as many slots in pinned host
//     memory, lent under the lender's hold to a backend
//     ([binding.Bind], [binding.New]) over its own driver.
//   - [LeaseHolder]: drives a lender as an engine's runtime would —
//     lease the slots, build the request's view, submit, wait for
//     quiescence, mark what arrived, release the slots.
//   - [Run]: the round trip. The publisher's pages (reproducible bytes)
//     go device → staging → store; the fetcher fetches into its staging
//     and copies staging → device; the fetcher's pages are compared with
//     the publisher's. [Report] says what moved, GB/s each way (the copy
//     and the store apart), the device, and whether it was a GPU or the
//     stand-in, and why.
//   - [ResumeBound] and [LayerPrefixes]: where a request resumes.
//
// # Layout
//
// The view of a request has one group per layer, in layer order, each
// the layer's blocks in block order. Slot layer×Blocks + block of the
// staging region holds that layer's block, and page (layer, block) sits
// at offset (layer×Blocks + block)×BlockBytes of the device pages: a
// layer's run of blocks is contiguous on both sides, so one copy moves
// it each way. Block b of layer l is named by the request's ID, l and b
// ([Request.Name]); the backend makes the store key from the name.
//
// # What it promises
//
//   - The resume bound is the number of leading blocks that arrived in
//     every layer: the minimum over layers of each layer's delivered
//     prefix, never contract.Outcome.Prefix over the whole view (which
//     counts whole earlier layers). A fetch copies to the device only
//     the blocks below the bound, in every layer: a block past it that
//     did arrive is not copied, since the request resumes at the bound.
//   - Slots go back to the lender only after the attempt over them has
//     quiesced. A lease holder whose context ends cancels the attempt
//     and returns; the lease stays out until the attempt quiesces (maybe
//     never).
//   - The owner's cleanup order, per lender: Shutdown answers no labels
//     (the binding has drained the driver, unregistered the region and
//     released the hold), the driver is closed, then the staging memory
//     and the pages are freed. What a store may still touch is kept and
//     reported ([ErrKept]), never freed.
//   - Every CUDA call runs on one goroutine locked to its OS thread
//     (package cudart); a missing library or symbol is an error, never a
//     panic; after a failed nvml.Init no other NVML call is made
//     (package gpus).
//
// # What it refuses
//
// Shapes that are not positive, over 2^31 slots or over 1 TiB a lender
// ([ErrConfig], naming the field); a key prefix the keys package
// refuses; lending from a closed lender ([ErrLenderClosed]); with
// [GPURequired], a machine without a usable GPU ([ErrNoGPU], saying
// why).
//
// # Decisions
//
//   - One staging region per lender, Host kind (pinned memory), not
//     device memory lent to the store: every store driver can reach it,
//     and the copies between pages and staging are the engine's own
//     work, timed apart from the store's.
//   - A lender's slots are lent whole, to one request at a time: the
//     request is all the lender's blocks. Enough for a round trip; an
//     engine would lease slot ranges.
//   - Copies are synchronous (cudaMemcpy between pinned memory and the
//     device): they run at the bus's rate, and no stream has to outlive
//     a copy that a store's access could overlap.
//   - Fetch copies staging → device after quiescence, not at the
//     outcome: delivered slots are final at the outcome, but waiting
//     costs nothing in a round trip and keeps one rule for the slots.
//   - A fault is the outcome's, not an error of Run: the report carries
//     it, with the bound and the pages left untouched past it. Run's
//     error means it could not run to its end.
//   - The run's keys live under KeyPrefix/gpuroundtrip/<time>-<random>:
//     a store never overwrites, so a second run must not meet the first
//     run's objects.
//   - With [GPUIfPresent] (the zero value, what `kvshare roundtrip --gpu`
//     asks for) any reason not to use a GPU — no NVML, no device, no
//     runtime — falls back to the stand-in and is said in Report.NoGPU;
//     [GPURequired] makes it an error.
//   - The device is named from NVML by matching the CUDA runtime's PCI
//     bus id, since NVML's index and the runtime's ordinal can differ
//     (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER).
//   - The CUDA tier is opt-in: KVSHARE_CUDA=1 ([CUDATier]); off, its
//     tests skip with one line ([CUDATierOff]); on, a machine without a
//     usable GPU fails them, saying why. KVSHARE_CUDA_DEVICE picks the
//     ordinal.
//
// # Dependencies beyond the workspace
//
//   - github.com/ebitengine/purego (package cudart): the CUDA runtime
//     without cgo or a link-time dependency, found at run time.
//   - github.com/NVIDIA/go-nvml (package gpus): NVIDIA's maintained NVML
//     binding. It needs cgo, and its first build prints pages of gcc
//     deprecation warnings for nvml.h, so it is compiled only with the
//     nvml build tag (go build -tags nvml); without it, [OpenGPU] finds
//     the GPU through the CUDA runtime alone and names it by ordinal and
//     PCI address. Its mock package (pkg/nvml/mock) is used by tests
//     only.
//   - mooncakedrv and its pool packages: the real-pool variants and
//     [MooncakeStore].
package gpuroundtrip
