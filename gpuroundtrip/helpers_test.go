package gpuroundtrip

import (
	"context"
	"log/slog"
	"testing"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/patience"
	"github.com/stretchr/testify/require"
)

// quiet drops the records of backends and runtimes under test.
var quiet = slog.New(slog.DiscardHandler)

// shape is a small request: 4 layers × 8 blocks of 4 KiB.
const (
	testLayers     = 4
	testBlocks     = 8
	testBlockBytes = 4 << 10
	testPrefix     = "gpuroundtrip-test"
)

// pair is two lenders over the stand-in and one memdrv store, each with
// its own driver, as the round trip has them.
type pair struct {
	dev      Device
	store    *memdrv.Store
	pub, fet *Lender
	pubDrv   *memdrv.Driver
	fetDrv   *memdrv.Driver
	stem     keys.Stem
}

// newPair builds a pair over the stand-in; both lenders are closed (in
// the owner's cleanup order) when the test ends, and the test fails if
// anything was kept.
func newPair(t *testing.T, rowsPerCall int) *pair {
	t.Helper()
	return newPairOn(t, NewHostDevice(), rowsPerCall)
}

// newPairOn builds a pair on dev.
func newPairOn(t *testing.T, dev Device, rowsPerCall int) *pair {
	t.Helper()
	p := &pair{dev: dev, store: memdrv.NewStore()}
	p.pubDrv = memdrv.New(p.store, memdrv.Options{Workers: 2})
	p.fetDrv = memdrv.New(p.store, memdrv.Options{Workers: 2})
	var err error
	p.stem, err = keys.NewStem(testPrefix)
	require.NoError(t, err)
	p.pub = newTestLender(t, "publisher", p.dev, p.pubDrv, rowsPerCall)
	p.fet = newTestLender(t, "fetcher", p.dev, p.fetDrv, rowsPerCall)
	return p
}

func newTestLender(t *testing.T, name string, dev Device, drv *memdrv.Driver, rowsPerCall int) *Lender {
	t.Helper()
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	l, err := NewLender(ctx, LenderConfig{
		Name: name, Device: dev, Layers: testLayers, Blocks: testBlocks, BlockBytes: testBlockBytes,
		Driver:  drv,
		Backend: binding.Config{KeyPrefix: testPrefix, MaxRowsPerCall: rowsPerCall, Logger: quiet},
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := patience.For(t).Context(context.Background())
		defer cancel()
		require.NoError(t, l.Close(ctx))
	})
	return l
}

// key is the store key of a request's block.
func (p *pair) key(t *testing.T, req Request, layer, block int) string {
	t.Helper()
	k, err := p.stem.Key(req.Name(layer, block))
	require.NoError(t, err)
	return k
}

// testPages returns reproducible page bytes for a lender of the test shape.
func testPages(seed uint64) []byte {
	b := make([]byte, testLayers*testBlocks*testBlockBytes)
	fill(b, seed)
	return b
}

// page returns page (layer, block) of a lender's pages.
func page(pages []byte, layer, block int) []byte {
	off := (layer*testBlocks + block) * testBlockBytes
	return pages[off : off+testBlockBytes]
}

// testCtx returns a context for one wait of t on something memdrv does
// at once, bounded by patience: it only keeps a broken test from hanging.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := patience.For(t).Context(t.Context())
	t.Cleanup(cancel)
	return ctx
}
