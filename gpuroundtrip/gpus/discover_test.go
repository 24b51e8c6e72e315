//go:build cgo && nvml

package gpus

import (
	"fmt"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	mockserver "github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// After a failed Init, no other NVML function is called: the mock
// leaves every other function unset, and an unset function panics when
// called (as the real library kills the process).
func TestAFailedInitIsTheLastNVMLCall(t *testing.T) {
	for _, tc := range []struct {
		ret   nvml.Return
		noGPU bool
		want  string
	}{
		{nvml.ERROR_LIBRARY_NOT_FOUND, true, "gpus: no GPU: NVML library not found"},
		{nvml.ERROR_DRIVER_NOT_LOADED, true, "gpus: no GPU: NVIDIA driver not loaded"},
		{nvml.ERROR_NO_PERMISSION, false, "gpus: NVML init failed: ERROR_NO_PERMISSION"},
		{nvml.ERROR_LIB_RM_VERSION_MISMATCH, false, "gpus: NVML init failed: ERROR_LIB_RM_VERSION_MISMATCH"},
		{nvml.Return(4242), false, "gpus: NVML init failed: NVML return 4242"},
	} {
		t.Run(returnName(tc.ret), func(t *testing.T) {
			lib := &mock.Interface{InitFunc: func() nvml.Return { return tc.ret }}
			m, err := discover(lib)
			require.Error(t, err)
			assert.Equal(t, tc.noGPU, isNoGPU(err))
			assert.Contains(t, err.Error(), tc.want)
			assert.Empty(t, m.GPUs)
			assert.Len(t, lib.InitCalls(), 1)
		})
	}
}

// An H200 server as go-nvml's mock has it (each device given a PCI
// address of its own, which the mock leaves zero): every device, named,
// with its memory and PCI address; one Shutdown.
func TestDiscoverListsEveryGPU(t *testing.T) {
	server := dgxh200.New()
	for i, d := range server.Devices {
		d.(*mockserver.Device).GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
			return nvml.PciInfo{Domain: 0, Bus: uint32(0x18 + i)}, nvml.SUCCESS
		}
	}
	shutdowns := 0
	shutdown := server.ShutdownFunc
	server.ShutdownFunc = func() nvml.Return { shutdowns++; return shutdown() }
	m, err := discover(server)
	require.NoError(t, err)
	require.Len(t, m.GPUs, 8)
	assert.Equal(t, 1, shutdowns)
	assert.NotEmpty(t, m.Driver)
	for i, g := range m.GPUs {
		assert.Equal(t, i, g.Index)
		assert.Contains(t, g.Name, "H200")
		assert.NotEmpty(t, g.UUID)
		assert.Greater(t, g.MemoryBytes, uint64(100<<30))
		assert.Equal(t, fmt.Sprintf("00000000:%02x:00.0", 0x18+i), g.PCIBusID)
		got, ok := m.ByPCIBusID(g.PCIBusID)
		require.True(t, ok, "by its own bus id %q", g.PCIBusID)
		assert.Equal(t, g, got)
	}
}

// A driver with no device is no GPU; NVML is shut down all the same.
func TestNoDeviceIsNoGPU(t *testing.T) {
	shutdowns := 0
	lib := &mock.Interface{
		InitFunc:                   func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:               func() nvml.Return { shutdowns++; return nvml.SUCCESS },
		SystemGetDriverVersionFunc: func() (string, nvml.Return) { return "580.65", nvml.SUCCESS },
		DeviceGetCountFunc:         func() (int, nvml.Return) { return 0, nvml.SUCCESS },
	}
	_, err := discover(lib)
	assert.True(t, isNoGPU(err))
	assert.EqualError(t, err, "gpus: no GPU: the NVIDIA driver (580.65) reports no device")
	assert.Equal(t, 1, shutdowns)
}

// On this machine's real NVML: either GPUs, or no GPU said plainly; the
// process survives either way (a call after a failed Init would kill
// it).
func TestDiscoverOnThisMachine(t *testing.T) {
	m, err := Discover()
	if err != nil {
		require.True(t, isNoGPU(err), "only 'no GPU' is expected here, got %v", err)
		t.Logf("no GPU here: %v", err)
		return
	}
	require.NotEmpty(t, m.GPUs)
	for _, g := range m.GPUs {
		t.Logf("GPU: %v", g)
	}
}
