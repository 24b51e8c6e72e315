package gpuroundtrip

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/kvshare/kvshare/gpuroundtrip/cudart"
	"github.com/kvshare/kvshare/gpuroundtrip/gpus"
)

// ErrNoGPU is wrapped by [OpenGPU]'s answer when there is no GPU to use:
// NVML finds none (no library, no driver, no device, no cgo), or the CUDA
// runtime reports no usable device.
var ErrNoGPU = gpus.ErrNoGPU

// discoverGPUs is how OpenGPU asks NVML; tests stand a machine in.
var discoverGPUs = gpus.Discover

// GPUOptions say which GPU [OpenGPU] opens, and through which runtime.
type GPUOptions struct {
	// Index is the CUDA device ordinal.
	Index int
	// CUDART is the CUDA runtime library's path or name; empty means
	// $KVSHARE_CUDART, else libcudart.so, .so.13, .so.12.
	CUDART string
	// Logger receives the runtime's record at open; nil: slog.Default().
	Logger *slog.Logger
}

// cudaDevice is the CUDA runtime as a [Device], named from NVML.
type cudaDevice struct {
	*cudart.Runtime
	name string
}

func (d *cudaDevice) Name() string { return d.name }

func (d *cudaDevice) OnGPU() bool { return true }

// OpenGPU finds the machine's GPUs with NVML and opens the CUDA runtime
// on one. No GPU is an error wrapping [ErrNoGPU] that says why; a GPU
// whose runtime cannot be loaded is an error wrapping
// [cudart.ErrLibrary] that names what was tried. In a build without
// NVML (no nvml build tag) the CUDA runtime alone says whether there is
// a GPU: a runtime that cannot be loaded then means none.
func OpenGPU(opts GPUOptions) (Device, error) {
	machine, err := discoverGPUs()
	if errors.Is(err, gpus.ErrNoNVML) {
		return openWithoutNVML(opts, err)
	}
	if err != nil {
		return nil, err
	}
	rt, err := cudart.Open(cudart.Options{Library: opts.CUDART, Device: opts.Index, Logger: opts.Logger})
	if err != nil {
		if isNoDevice(err) {
			return nil, fmt.Errorf("%w: NVML lists %d GPU(s), but the CUDA runtime has none to use: %w", ErrNoGPU, len(machine.GPUs), err)
		}
		return nil, fmt.Errorf("NVML lists %d GPU(s) (driver %s), but the CUDA runtime cannot be used: %w", len(machine.GPUs), machine.Driver, err)
	}
	name := fmt.Sprintf("CUDA device %d (PCI %s; not listed by NVML)", rt.Device(), rt.PCIBusID())
	if g, ok := machine.ByPCIBusID(rt.PCIBusID()); ok {
		name = g.String()
	}
	return &cudaDevice{Runtime: rt, name: name}, nil
}

// openWithoutNVML opens the CUDA runtime on the device opts names, with
// no NVML to ask first (noNVML says why).
func openWithoutNVML(opts GPUOptions, noNVML error) (Device, error) {
	rt, err := cudart.Open(cudart.Options{Library: opts.CUDART, Device: opts.Index, Logger: opts.Logger})
	switch {
	case errors.Is(err, cudart.ErrLibrary):
		return nil, fmt.Errorf("%w: no CUDA runtime to load (%w), and no NVML to ask (%w)", ErrNoGPU, err, noNVML)
	case isNoDevice(err):
		return nil, fmt.Errorf("%w: the CUDA runtime has no device to use: %w", ErrNoGPU, err)
	case err != nil:
		return nil, fmt.Errorf("the CUDA runtime cannot be used: %w", err)
	}
	name := fmt.Sprintf("CUDA device %d (PCI %s; this build has no NVML to name it: -tags nvml)", rt.Device(), rt.PCIBusID())
	return &cudaDevice{Runtime: rt, name: name}, nil
}
