//go:build cgo && nvml

package gpus

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Discover asks NVML (libnvidia-ml.so.1) for the machine's GPUs. No GPU
// is an error wrapping [ErrNoGPU] that says why; see the package
// documentation for what it never calls.
func Discover() (Machine, error) {
	return discover(nvml.New())
}

// discover is Discover over any nvml.Interface.
func discover(lib nvml.Interface) (Machine, error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		// No other NVML call from here on: not Shutdown, not ErrorString.
		switch ret {
		case nvml.ERROR_LIBRARY_NOT_FOUND:
			return Machine{}, fmt.Errorf("%w: NVML library not found (libnvidia-ml.so.1: no NVIDIA driver installed)", ErrNoGPU)
		case nvml.ERROR_DRIVER_NOT_LOADED:
			return Machine{}, fmt.Errorf("%w: NVIDIA driver not loaded", ErrNoGPU)
		}
		return Machine{}, fmt.Errorf("gpus: NVML init failed: %s", returnName(ret))
	}
	m, err := enumerate(lib)
	if ret := lib.Shutdown(); ret != nvml.SUCCESS && err == nil {
		err = fmt.Errorf("gpus: NVML shutdown: %s", returnName(ret))
	}
	return m, err
}

// enumerate reads the driver version and every device; NVML is
// initialised.
func enumerate(lib nvml.Interface) (Machine, error) {
	var m Machine
	if v, ret := lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		m.Driver = v
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return m, fmt.Errorf("gpus: NVML device count: %s", returnName(ret))
	}
	if n == 0 {
		return m, fmt.Errorf("%w: the NVIDIA driver (%s) reports no device", ErrNoGPU, m.Driver)
	}
	for i := range n {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return m, fmt.Errorf("gpus: NVML device %d: %s", i, returnName(ret))
		}
		g := GPU{Index: i}
		if g.Name, ret = d.GetName(); ret != nvml.SUCCESS {
			return m, fmt.Errorf("gpus: NVML device %d name: %s", i, returnName(ret))
		}
		g.UUID, _ = d.GetUUID()
		if mem, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
			g.MemoryBytes = mem.Total
		}
		if pci, ret := d.GetPciInfo(); ret == nvml.SUCCESS {
			g.PCIBusID = busID(pci)
		}
		m.GPUs = append(m.GPUs, g)
	}
	return m, nil
}

// returnName names an NVML return code without asking NVML.
func returnName(r nvml.Return) string {
	if s, ok := returnNames[r]; ok {
		return s
	}
	return fmt.Sprintf("NVML return %d", int32(r))
}

var returnNames = map[nvml.Return]string{
	nvml.ERROR_UNINITIALIZED:           "ERROR_UNINITIALIZED",
	nvml.ERROR_INVALID_ARGUMENT:        "ERROR_INVALID_ARGUMENT",
	nvml.ERROR_NOT_SUPPORTED:           "ERROR_NOT_SUPPORTED",
	nvml.ERROR_NO_PERMISSION:           "ERROR_NO_PERMISSION",
	nvml.ERROR_NOT_FOUND:               "ERROR_NOT_FOUND",
	nvml.ERROR_INSUFFICIENT_SIZE:       "ERROR_INSUFFICIENT_SIZE",
	nvml.ERROR_DRIVER_NOT_LOADED:       "ERROR_DRIVER_NOT_LOADED",
	nvml.ERROR_TIMEOUT:                 "ERROR_TIMEOUT",
	nvml.ERROR_LIBRARY_NOT_FOUND:       "ERROR_LIBRARY_NOT_FOUND",
	nvml.ERROR_FUNCTION_NOT_FOUND:      "ERROR_FUNCTION_NOT_FOUND",
	nvml.ERROR_GPU_IS_LOST:             "ERROR_GPU_IS_LOST",
	nvml.ERROR_RESET_REQUIRED:          "ERROR_RESET_REQUIRED",
	nvml.ERROR_OPERATING_SYSTEM:        "ERROR_OPERATING_SYSTEM",
	nvml.ERROR_LIB_RM_VERSION_MISMATCH: "ERROR_LIB_RM_VERSION_MISMATCH (the NVML library and the kernel driver differ in version)",
	nvml.ERROR_UNKNOWN:                 "ERROR_UNKNOWN",
}

// busID is NVML's bus id string, or one made from the numbers when the
// string is empty.
func busID(pci nvml.PciInfo) string {
	b := make([]byte, 0, len(pci.BusId))
	for _, c := range pci.BusId {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	if len(b) > 0 {
		return string(b)
	}
	return fmt.Sprintf("%08x:%02x:%02x.0", pci.Domain, pci.Bus, pci.Device)
}
