package gpus

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrNoGPU means there is no GPU to use: NVML's library is not there, its
// driver is not loaded, or it reports no device.
var ErrNoGPU = errors.New("gpus: no GPU")

// ErrNoNVML means this build cannot ask NVML: it was built without cgo
// or without the nvml build tag. It says nothing about the machine.
var ErrNoNVML = errors.New("gpus: no NVML in this build")

// GPU is one device as NVML reports it.
type GPU struct {
	// Index is NVML's index, which need not be the CUDA runtime's ordinal
	// (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER); match by PCIBusID.
	Index       int
	Name        string
	UUID        string
	MemoryBytes uint64
	// PCIBusID is "domain:bus:device.function" in NVML's spelling, e.g.
	// "00000000:18:00.0".
	PCIBusID string
}

// Machine is what Discover found.
type Machine struct {
	Driver string // the driver's version
	GPUs   []GPU
}

// ByPCIBusID returns the GPU at the PCI address busID, in NVML's or the
// CUDA runtime's spelling ("00000000:18:00.0" and "0000:18:00.0" are the
// same device).
func (m Machine) ByPCIBusID(busID string) (GPU, bool) {
	want, ok := parseBusID(busID)
	if !ok {
		return GPU{}, false
	}
	for _, g := range m.GPUs {
		if got, ok := parseBusID(g.PCIBusID); ok && got == want {
			return g, true
		}
	}
	return GPU{}, false
}

// parseBusID reads "domain:bus:device.function" (hex fields of any
// width, either case).
func parseBusID(s string) ([4]uint64, bool) {
	var out [4]uint64
	dom, rest, ok1 := strings.Cut(strings.TrimSpace(s), ":")
	bus, rest, ok2 := strings.Cut(rest, ":")
	dev, fn, ok3 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || !ok3 {
		return out, false
	}
	for i, f := range []string{dom, bus, dev, fn} {
		v, err := strconv.ParseUint(f, 16, 32)
		if err != nil {
			return out, false
		}
		out[i] = v
	}
	return out, true
}

// String is a line for a report: "NVIDIA H200 (index 0, 00000000:18:00.0,
// 141 GiB)".
func (g GPU) String() string {
	return fmt.Sprintf("%s (index %d, %s, %d GiB)", g.Name, g.Index, g.PCIBusID, g.MemoryBytes>>30)
}
