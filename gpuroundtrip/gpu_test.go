package gpuroundtrip

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/kvshare/kvshare/gpuroundtrip/cudart"
	"github.com/kvshare/kvshare/gpuroundtrip/gpus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeRuntime builds the fake libcudart.so of package cudart's tests
// (its "device" memory is host memory of the fake's) and returns its
// path and its fake_set_devices. It skips without gcc, unless CI=true or
// KVSHARE_REQUIRE_GCC is set.
func fakeRuntime(t *testing.T) (path string, setDevices func(n, err int32)) {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		if os.Getenv("CI") == "true" || os.Getenv("KVSHARE_REQUIRE_GCC") != "" {
			t.Fatalf("gcc is required to build the fake CUDA runtime: %v", err)
		}
		t.Skip("gcc not found: skipping the tests that build the fake CUDA runtime")
	}
	path = filepath.Join(t.TempDir(), "libcudart.so")
	src := filepath.Join("cudart", "testdata", "fakecudart", "fakecudart.c")
	out, err := exec.Command(gcc, "-shared", "-fPIC", "-O1", "-o", path, src, "-lpthread").CombinedOutput()
	require.NoError(t, err, "%s", out)
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	require.NoError(t, err)
	sym, err := purego.Dlsym(h, "fake_set_devices")
	require.NoError(t, err)
	purego.RegisterFunc(&setDevices, sym)
	return path, setDevices
}

// standMachine makes OpenGPU see machine (or err) instead of asking NVML,
// until the test ends.
func standMachine(t *testing.T, machine gpus.Machine, err error) {
	t.Helper()
	saved := discoverGPUs
	discoverGPUs = func() (gpus.Machine, error) { return machine, err }
	t.Cleanup(func() { discoverGPUs = saved })
}

// fakeH200 is the machine the fake runtime's device 0 belongs to: the
// fake reports PCI bus id 0000:18:00.0 for it.
var fakeH200 = gpus.Machine{Driver: "580.65", GPUs: []gpus.GPU{
	{Index: 0, Name: "NVIDIA H200", UUID: "GPU-fake", MemoryBytes: 141 << 30, PCIBusID: "00000000:18:00.0"},
}}

// The whole GPU path on a CPU: NVML's answer stood in, the CUDA runtime
// a fake whose device memory is host memory. Run moves the pages through
// the binding, names the device from NVML by its PCI address, and gives
// everything back.
func TestRunOverTheFakeCUDARuntime(t *testing.T) {
	path, _ := fakeRuntime(t)
	standMachine(t, fakeH200, nil)
	cfg := smallConfig()
	cfg.GPU = GPURequired
	cfg.CUDART = path
	rep, err := Run(t.Context(), cfg, nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%+v", rep)
	assert.True(t, rep.OnGPU)
	assert.Equal(t, "NVIDIA H200 (index 0, 00000000:18:00.0, 141 GiB)", rep.Device)
	assert.Empty(t, rep.NoGPU)
}

// The lender scenarios over the fake runtime.
func TestScenariosOverTheFakeCUDARuntime(t *testing.T) {
	path, _ := fakeRuntime(t)
	standMachine(t, fakeH200, nil)
	dev, err := OpenGPU(GPUOptions{CUDART: path, Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { _ = dev.Close() })
	t.Run("round trip", func(t *testing.T) { testRoundTrip(t, dev) })
	t.Run("faulted fetch", func(t *testing.T) { testFaultedFetch(t, dev) })
	t.Run("missing block in one layer", func(t *testing.T) { testMissingBlock(t, dev) })
}

// What OpenGPU answers when there is no GPU, or no runtime for it.
func TestOpenGPUSaysWhy(t *testing.T) {
	path, setDevices := fakeRuntime(t)
	for _, tc := range []struct {
		name    string
		machine gpus.Machine
		nvmlErr error
		cudart  string
		devices int32 // the fake's count; -1: cudaErrorNoDevice
		index   int
		noGPU   bool
		libErr  bool
		want    string
	}{
		{"NVML finds none", gpus.Machine{}, errors.Join(gpus.ErrNoGPU, errors.New("driver not loaded")), path, 1, 0, true, false, "driver not loaded"},
		{"no runtime library", fakeH200, nil, "/nonexistent/libcudart.so.12", 1, 0, false, true, "NVML lists 1 GPU(s) (driver 580.65), but the CUDA runtime cannot be used"},
		{"the runtime sees no device", fakeH200, nil, path, -1, 0, true, false, "cudaErrorNoDevice"},
		{"ordinal out of range", fakeH200, nil, path, 1, 1, true, false, "device 1, but the CUDA runtime reports 1"},
		{"no NVML in the build, no runtime library", gpus.Machine{}, errNoNVML, "/nonexistent/libcudart.so.12", 1, 0, true, true, "no CUDA runtime to load"},
		{"no NVML in the build, the runtime sees no device", gpus.Machine{}, errNoNVML, path, -1, 0, true, false, "cudaErrorNoDevice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			standMachine(t, tc.machine, tc.nvmlErr)
			if tc.devices < 0 {
				setDevices(0, 100)
			} else {
				setDevices(tc.devices, 0)
			}
			dev, err := OpenGPU(GPUOptions{CUDART: tc.cudart, Index: tc.index, Logger: quiet})
			require.Error(t, err)
			assert.Nil(t, dev)
			assert.Equal(t, tc.noGPU, errors.Is(err, ErrNoGPU), "%v", err)
			assert.Equal(t, tc.libErr, errors.Is(err, cudart.ErrLibrary), "%v", err)
			assert.ErrorContains(t, err, tc.want)

			// Asked for a GPU if present, Run falls back and says why.
			cfg := smallConfig()
			cfg.GPU, cfg.CUDART, cfg.GPUIndex = GPUIfPresent, tc.cudart, tc.index
			rep, err := Run(t.Context(), cfg, nil)
			require.NoError(t, err)
			assert.True(t, rep.OK())
			assert.False(t, rep.OnGPU)
			assert.Contains(t, rep.NoGPU, tc.want)
		})
	}
	setDevices(1, 0)
}

// errNoNVML is what Discover answers in a build without the nvml tag.
var errNoNVML = fmt.Errorf("%w: built without the nvml tag", gpus.ErrNoNVML)

// In a build without NVML the CUDA runtime alone finds the GPU, named by
// its ordinal and PCI address.
func TestGPUWithoutNVML(t *testing.T) {
	path, _ := fakeRuntime(t)
	standMachine(t, gpus.Machine{}, errNoNVML)
	dev, err := OpenGPU(GPUOptions{CUDART: path, Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { _ = dev.Close() })
	assert.Equal(t, "CUDA device 0 (PCI 0000:18:00.0; this build has no NVML to name it: -tags nvml)", dev.Name())
	assert.True(t, dev.OnGPU())
}

// A device NVML does not list is named by its ordinal and PCI address.
func TestGPUNotListedByNVML(t *testing.T) {
	path, _ := fakeRuntime(t)
	standMachine(t, gpus.Machine{GPUs: []gpus.GPU{{Name: "elsewhere", PCIBusID: "00000000:99:00.0"}}}, nil)
	dev, err := OpenGPU(GPUOptions{CUDART: path, Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { _ = dev.Close() })
	assert.Equal(t, "CUDA device 0 (PCI 0000:18:00.0; not listed by NVML)", dev.Name())
	assert.True(t, dev.OnGPU())
}

func TestTierVariables(t *testing.T) {
	for _, tc := range []struct {
		cuda, device string
		on           bool
		index        int
		bad          string
	}{
		{"", "", false, 0, ""},
		{"0", "", false, 0, ""},
		{"1", "", true, 0, ""},
		{"1", "2", true, 2, ""},
		{"yes", "", false, 0, `KVSHARE_CUDA="yes"`},
		{"1", "-1", true, 0, `KVSHARE_CUDA_DEVICE="-1"`},
		{"1", "gpu0", true, 0, `KVSHARE_CUDA_DEVICE="gpu0"`},
	} {
		t.Run(tc.cuda+"/"+tc.device, func(t *testing.T) {
			t.Setenv(EnvCUDA, tc.cuda)
			t.Setenv(EnvCUDADevice, tc.device)
			on, index, err := CUDATier()
			assert.Equal(t, tc.on, on)
			assert.Equal(t, tc.index, index)
			if tc.bad == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tc.bad)
			}
		})
	}
}
