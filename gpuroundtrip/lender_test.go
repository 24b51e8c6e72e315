package gpuroundtrip

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The view has one group per layer; slot layer×Blocks + block holds
// that layer's block, named by the request, the layer and the block.
func TestLenderViewLayout(t *testing.T) {
	p := newPair(t, 0)
	req := Request{ID: 42}
	v := p.pub.View(req)
	require.Len(t, v.Groups, testLayers)
	for layer, g := range v.Groups {
		assert.Equal(t, 0, g.Region)
		require.Len(t, g.Slots, testBlocks)
		require.Len(t, g.Names, testBlocks)
		for block := range testBlocks {
			assert.Equal(t, int32(layer*testBlocks+block), g.Slots[block])
			assert.Equal(t, p.pub.Slot(layer, block), int(g.Slots[block]))
			assert.Equal(t, req.Name(layer, block), g.Names[block])
		}
	}
	layers, blocks, bb := p.pub.Shape()
	assert.Equal(t, [3]int64{testLayers, testBlocks, testBlockBytes}, [3]int64{int64(layers), int64(blocks), bb})
	assert.Equal(t, "publisher", p.pub.Name())
	rows, bytes := p.pub.Backend().CallLimit(0)
	assert.Equal(t, testLayers*testBlocks, rows, "one region of layers×blocks slots")
	assert.Equal(t, int64(testLayers*testBlocks*testBlockBytes), bytes)
}

// A bad lender config is refused naming the field, and the driver the
// lender was given is closed all the same (it owns it).
func TestLenderConfigRefusesBadInput(t *testing.T) {
	good := func(drv contract.Driver) LenderConfig {
		return LenderConfig{Name: "l", Device: NewHostDevice(), Layers: 2, Blocks: 2, BlockBytes: 64, Driver: drv,
			Backend: binding.Config{KeyPrefix: testPrefix, Logger: quiet}}
	}
	for _, tc := range []struct {
		name  string
		bend  func(*LenderConfig)
		want  string
		isCfg bool
	}{
		{"no device", func(c *LenderConfig) { c.Device = nil }, "no device", true},
		{"no layers", func(c *LenderConfig) { c.Layers = 0 }, "layers is 0", true},
		{"negative blocks", func(c *LenderConfig) { c.Blocks = -1 }, "blocks is -1", true},
		{"no block bytes", func(c *LenderConfig) { c.BlockBytes = 0 }, "block bytes is 0", true},
		{"too many slots", func(c *LenderConfig) { c.Layers, c.Blocks = 1<<16, 1<<16 }, "over 2^31 slots", true},
		{"over 1 TiB", func(c *LenderConfig) { c.Layers, c.Blocks, c.BlockBytes = 1024, 1024, 2<<20 }, "over 1 TiB", true},
		{"bad key prefix", func(c *LenderConfig) { c.Backend.KeyPrefix = "/bad" }, "KeyPrefix", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			drv := memdrv.New(memdrv.NewStore(), memdrv.Options{})
			cfg := good(drv)
			tc.bend(&cfg)
			l, err := NewLender(testCtx(t), cfg)
			require.Error(t, err)
			assert.Nil(t, l)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, tc.isCfg, errors.Is(err, ErrConfig))
			_, rerr := drv.Register(contract.SlotRegion{Base: 4096, SlotBytes: 1, SlotCount: 1, Len: 1, Kind: contract.Host})
			assert.Error(t, rerr, "the driver was drained and closed")
			if dev, ok := cfg.Device.(*HostDevice); ok {
				n, h := dev.Live()
				assert.Equal(t, [2]int{0, 0}, [2]int{n, h}, "nothing stays allocated")
			}
		})
	}
	drv := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	cfg := good(drv)
	cfg.Driver = nil
	_, err := NewLender(testCtx(t), cfg)
	assert.ErrorIs(t, err, ErrConfig)
	assert.ErrorContains(t, err, "no driver")
}

// A registration the store refused escaped nothing: the hold is
// released, and the lender gives back its memory and closes the driver.
// One that may be live keeps the staging memory and the driver.
func TestLenderFailingRegistration(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		kept bool
	}{
		{"refused", fmt.Errorf("staged: %w", contract.ErrDriverRejected), false},
		{"may be live", &contract.RegistrationError{Registration: 1, Err: errors.New("staged: lost the answer")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := NewHostDevice()
			drv := memdrv.New(memdrv.NewStore(), memdrv.Options{})
			drv.FailNextRegister(tc.err)
			_, err := NewLender(testCtx(t), LenderConfig{Name: "l", Device: dev, Layers: 2, Blocks: 2, BlockBytes: 64, Driver: drv,
				Backend: binding.Config{KeyPrefix: testPrefix, Logger: quiet}})
			require.Error(t, err)
			assert.Equal(t, tc.kept, errors.Is(err, ErrKept), "%v", err)
			devices, pinned := dev.Live()
			assert.Zero(t, devices, "the pages are never lent: always freed")
			assert.Equal(t, map[bool]int{false: 0, true: 1}[tc.kept], pinned)
			assert.Equal(t, map[bool]int{false: 0, true: 1}[tc.kept], len(drv.Regions()))
		})
	}
}

// Close follows the owner's cleanup order and gives everything back.
func TestLenderCloseGivesEverythingBack(t *testing.T) {
	dev := NewHostDevice()
	drv := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	l, err := NewLender(testCtx(t), LenderConfig{Name: "l", Device: dev, Layers: 2, Blocks: 3, BlockBytes: 128, Driver: drv,
		Backend: binding.Config{KeyPrefix: testPrefix, Logger: quiet}})
	require.NoError(t, err)
	n, h := dev.Live()
	assert.Equal(t, [2]int{1, 1}, [2]int{n, h})
	assert.Len(t, drv.Regions(), 1)
	require.NoError(t, l.Close(testCtx(t)))
	require.NoError(t, l.Close(context.Background()), "idempotent")
	assert.True(t, l.hold.Released())
	assert.Empty(t, drv.Regions())
	n, h = dev.Live()
	assert.Equal(t, [2]int{0, 0}, [2]int{n, h})
}

// WritePages and ReadPages take exactly the pages' size.
func TestLenderPagesTakeTheirSize(t *testing.T) {
	p := newPair(t, 0)
	size := testLayers * testBlocks * testBlockBytes
	for _, n := range []int{0, size - 1, size + 1} {
		assert.ErrorIs(t, p.pub.WritePages(make([]byte, n)), ErrConfig)
		assert.ErrorIs(t, p.pub.ReadPages(make([]byte, n)), ErrConfig)
	}
	want := testPages(3)
	require.NoError(t, p.pub.WritePages(want))
	got := make([]byte, size)
	require.NoError(t, p.pub.ReadPages(got))
	assert.Equal(t, want, got)
}
