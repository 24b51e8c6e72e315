package gpuroundtrip

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smallConfig is Defaults shrunk to the test shape, over the stand-in.
func smallConfig() Config {
	cfg := Defaults()
	cfg.Layers, cfg.Blocks, cfg.BlockBytes = testLayers, testBlocks, testBlockBytes
	cfg.GPU = GPUNever
	cfg.KeyPrefix = testPrefix
	cfg.Logger = quiet
	return cfg
}

type step struct {
	name        string
	done, total int
}

// Run over the stand-in and the embedded store: what moved, each way,
// and everything given back.
func TestRunOverTheStandIn(t *testing.T) {
	var steps []step
	rep, err := Run(t.Context(), smallConfig(), func(name string, done, total int) {
		steps = append(steps, step{name, done, total})
	})
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%+v", rep)
	rows := testLayers * testBlocks
	assert.Equal(t, []step{{"publish", rows, rows}, {"fetch", rows, rows}}, steps)
	assert.Equal(t, "host memory (stand-in for a GPU)", rep.Device)
	assert.False(t, rep.OnGPU)
	assert.Empty(t, rep.NoGPU, "the stand-in was asked for")
	assert.Equal(t, "the embedded in-memory store", rep.Store)
	assert.True(t, strings.HasPrefix(rep.KeyPrefix, testPrefix+"/gpuroundtrip/"), rep.KeyPrefix)
	for _, ph := range []Phase{rep.Publish, rep.Fetch} {
		assert.Equal(t, rows, ph.Rows)
		assert.Equal(t, rows, ph.Delivered)
		assert.Equal(t, int64(rows*testBlockBytes), ph.Bytes)
		assert.Equal(t, int64(rows*testBlockBytes), ph.CopyBytes)
		assert.NoError(t, ph.Fault)
	}
	assert.Equal(t, testBlocks, rep.Bound)
	assert.Zero(t, rep.Mismatches)
	assert.Zero(t, rep.Overwritten)
	assert.True(t, rep.Freed)
}

// Asked for a GPU if present, on a machine without a usable one, Run
// uses the stand-in and says why: the reason OpenGPU gives on this host,
// whichever it is (no NVML, no device, a runtime that cannot be loaded).
func TestRunSaysWhyNotAGPU(t *testing.T) {
	cfg := smallConfig()
	cfg.GPU = GPUIfPresent
	rep, err := Run(t.Context(), cfg, nil)
	require.NoError(t, err)
	assert.True(t, rep.OK())
	if rep.OnGPU {
		t.Logf("a GPU is here: %s", rep.Device)
		return
	}
	_, why := OpenGPU(GPUOptions{Logger: quiet})
	require.Error(t, why, "Run fell back while OpenGPU opens a GPU")
	assert.Equal(t, "host memory (stand-in for a GPU)", rep.Device)
	assert.Equal(t, why.Error(), rep.NoGPU)
}

// Required, a GPU that is not there (or cannot be used) is an error
// saying why: OpenGPU's reason on this host, under Run's own words.
func TestRunRequiringAGPUFailsWithoutOne(t *testing.T) {
	dev, why := OpenGPU(GPUOptions{Logger: quiet})
	if why == nil {
		_ = dev.Close()
		t.Skip("a GPU is here: the CUDA suite (KVSHARE_CUDA=1) covers it")
	}
	cfg := smallConfig()
	cfg.GPU = GPURequired
	rep, err := Run(t.Context(), cfg, nil)
	require.Error(t, err)
	assert.EqualError(t, err, "gpuroundtrip: a GPU is required: "+why.Error())
	assert.Equal(t, errors.Is(why, ErrNoGPU), errors.Is(err, ErrNoGPU), "wraps what OpenGPU's answer wraps")
	assert.Empty(t, rep.Device)
}

// Bad config is refused before anything is allocated, naming the field.
func TestRunRefusesBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		bend func(*Config)
		want string
	}{
		{"layers", func(c *Config) { c.Layers = 0 }, "layers is 0"},
		{"blocks", func(c *Config) { c.Blocks = -2 }, "blocks is -2"},
		{"block bytes", func(c *Config) { c.BlockBytes = 0 }, "block bytes is 0"},
		{"size", func(c *Config) { c.Layers, c.Blocks, c.BlockBytes = 1024, 1024, 1<<21 }, "over 1 TiB"},
		{"GPU use", func(c *Config) { c.GPU = 9 }, "GPU use is GPUUse(9)"},
		{"GPU index", func(c *Config) { c.GPUIndex = -1 }, "GPU index is -1"},
		{"workers", func(c *Config) { c.Workers = 0 }, "workers is 0"},
		{"rows per call", func(c *Config) { c.RowsPerCall = -1 }, "rows per call is -1"},
		{"bytes per call", func(c *Config) { c.BytesPerCall = -1 }, "bytes per call is -1"},
		{"timeout", func(c *Config) { c.Timeout = 0 }, "timeout is 0s"},
		{"key prefix", func(c *Config) { c.KeyPrefix = "bad prefix" }, `key prefix "bad prefix"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := smallConfig()
			tc.bend(&cfg)
			_, err := Run(t.Context(), cfg, nil)
			require.ErrorIs(t, err, ErrConfig)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	assert.Equal(t, "if-present", GPUIfPresent.String())
	assert.Equal(t, "never", GPUNever.String())
	assert.Equal(t, "required", GPURequired.String())
}

// crashStore is the embedded store whose fetcher's driver crashes in
// every get: every block faults.
type crashStore struct{ store *memdrv.Store }

func (s crashStore) Describe() string { return "a store whose gets crash" }

func (s crashStore) OpenDriver(_ context.Context, lender string) (contract.Driver, error) {
	d := memdrv.New(s.store, memdrv.Options{Workers: 1, Logger: quiet})
	if lender == "fetcher" {
		d.Crash(memdrv.GetDir)
	}
	return d, nil
}

// A fetch that faults is not an error of Run: the report says so, the
// request resumes at block 0, and the pages are untouched.
func TestRunReportsAFaultedFetch(t *testing.T) {
	cfg := smallConfig()
	cfg.Store = crashStore{memdrv.NewStore()}
	rep, err := Run(t.Context(), cfg, nil)
	require.NoError(t, err)
	assert.False(t, rep.OK())
	assert.Error(t, rep.Fetch.Fault)
	assert.NoError(t, rep.Publish.Fault)
	assert.Zero(t, rep.Bound)
	assert.Zero(t, rep.Fetch.CopyBytes)
	assert.Zero(t, rep.Overwritten, "nothing reached the pages")
	assert.Zero(t, rep.Mismatches)
	assert.True(t, rep.Freed)
	assert.Equal(t, "a store whose gets crash", rep.Store)
}

// A store that cannot open a driver is an error naming the lender.
type brokenStore struct{}

func (brokenStore) Describe() string { return "no store" }

func (brokenStore) OpenDriver(context.Context, string) (contract.Driver, error) {
	return nil, errors.New("no pool here")
}

func TestRunWithoutAStore(t *testing.T) {
	cfg := smallConfig()
	cfg.Store = brokenStore{}
	_, err := Run(t.Context(), cfg, nil)
	assert.EqualError(t, err, "lender publisher: no pool here")
}

func TestPhaseRates(t *testing.T) {
	p := Phase{Bytes: 2e9, CopyBytes: 1e9, Copy: time.Second, Store: time.Second}
	assert.InDelta(t, 1.0, p.GBps(), 1e-9)
	assert.InDelta(t, 1.0, p.CopyGBps(), 1e-9)
	assert.InDelta(t, 2.0, p.StoreGBps(), 1e-9)
	assert.Zero(t, Phase{Bytes: 1}.GBps(), "no time, no rate")
}
