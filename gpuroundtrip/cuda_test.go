package gpuroundtrip

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// The CUDA tier: the round trip through a real GPU's memory. Off (one
// skip line) unless KVSHARE_CUDA=1; on, no usable GPU fails the test,
// saying why. `go run mage.go cuda` runs it.

// tierGPU opens the tier's GPU for t, or skips t when the tier is
// off, or fails it when the tier is on and there is no usable GPU. The
// device is closed when the test ends.
func tierGPU(t *testing.T) Device {
	t.Helper()
	on, index, err := CUDATier()
	if err != nil {
		t.Fatalf("CUDA tier: %v", err)
	}
	if !on {
		t.Skip(CUDATierOff)
	}
	dev, err := OpenGPU(GPUOptions{Index: index, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	if err != nil {
		t.Fatalf("CUDA tier on (%s=1) but no usable GPU: %v", EnvCUDA, err)
	}
	t.Cleanup(func() { _ = dev.Close() })
	t.Logf("GPU: %s", dev.Name())
	return dev
}

// cudaConfig is the tier's request: 32 layers × 128 blocks of 128 KiB,
// 512 MiB of pages each way.
func cudaConfig() Config {
	cfg := Defaults()
	cfg.Layers, cfg.Blocks, cfg.BlockBytes = 32, 128, 128<<10
	cfg.GPU = GPURequired
	cfg.Workers = 4
	cfg.KeyPrefix = testPrefix
	return cfg
}

// logReport writes the report's figures: the device, the sizes, and
// GB/s each way.
func logReport(t *testing.T, rep Report) {
	t.Helper()
	c := rep.Config
	t.Logf("device: %s (on GPU: %v)", rep.Device, rep.OnGPU)
	t.Logf("store: %s", rep.Store)
	t.Logf("request: %d layers x %d blocks x %d KiB = %d MiB each way", c.Layers, c.Blocks, c.BlockBytes>>10,
		int64(c.Layers*c.Blocks)*c.BlockBytes>>20)
	for _, ph := range []struct {
		name, copy string
		p          Phase
	}{{"publish", "device->host", rep.Publish}, {"fetch", "host->device", rep.Fetch}} {
		t.Logf("%s: %d/%d blocks, %.2f GB/s overall (copy %s %.2f GB/s in %v, store %.2f GB/s in %v)",
			ph.name, ph.p.Delivered, ph.p.Rows, ph.p.GBps(), ph.copy, ph.p.CopyGBps(), ph.p.Copy, ph.p.StoreGBps(), ph.p.Store)
	}
	t.Logf("resume bound %d of %d; mismatches %d; overwritten %d; freed %v", rep.Bound, c.Blocks, rep.Mismatches, rep.Overwritten, rep.Freed)
}

// The round trip of Run over real device memory and the embedded store.
func TestCUDARoundTripOverMemdrv(t *testing.T) {
	dev := tierGPU(t)
	_ = dev.Close() // Run opens its own
	cfg := cudaConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	rep, err := Run(t.Context(), cfg, nil)
	require.NoError(t, err)
	logReport(t, rep)
	require.True(t, rep.OnGPU)
	require.True(t, rep.OK(), fmt.Sprintf("%+v", rep))
}

// The lender and lease holder scenarios of the CPU suite, over device
// memory.
func TestCUDAScenarios(t *testing.T) {
	dev := tierGPU(t)
	t.Run("round trip", func(t *testing.T) { testRoundTrip(t, dev) })
	t.Run("faulted fetch", func(t *testing.T) { testFaultedFetch(t, dev) })
	t.Run("missing block in one layer", func(t *testing.T) { testMissingBlock(t, dev) })
}
