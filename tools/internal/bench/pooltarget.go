package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/tools/internal/poolconfig"
)

// poolTarget is the pool measurement 5 runs against: one client of it
// (kvshare's driver owns it; the raw loop calls it too), the store
// config's settings, and how to give back what was started for the run.
type poolTarget struct {
	client mooncakesdk.Client
	config mooncakesdk.StoreConfig
	// describe names the pool in the report; warm is how many bytes to
	// put (then remove) before measuring, so the provider's segment
	// memory is touched.
	describe string
	warm     int64
	// stop stops a pool started for the run (nil for a given one). It
	// runs after the client is destroyed.
	stop func() error
}

// openPool opens a client of the pool the options name: the store
// config StorePath, or a loopback pool started from MooncakeDir with a
// Segment-byte segment (its config written into a temporary folder, the
// client environment it asks for set in this process).
func openPool(ctx context.Context, o poolOptions, logger *slog.Logger) (*poolTarget, error) {
	t := &poolTarget{warm: 2 * o.Bytes}
	path := o.StorePath
	if o.MooncakeDir != "" {
		started, p, stop, err := poolconfig.Start(ctx, o.MooncakeDir, pool.Options{SegmentSize: o.Segment, Providers: o.Providers}, logger, poolconfig.Replicas(o.Replicas))
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		path, t.stop = started, stop
		t.describe = fmt.Sprintf("a loopback pool started from %s (master %s, %d provider(s) of a %s segment each, replicas %d)",
			o.MooncakeDir, p.MasterAddress(), p.Providers(), size(o.Segment), max(1, o.Replicas))
		t.warm = o.Segment
	}
	cfg, err := mooncakesdk.LoadStoreConfig(path)
	if err != nil {
		return nil, errors.Join(err, t.close())
	}
	if t.describe == "" {
		t.describe = fmt.Sprintf("the pool of %s (master %s)", path, cfg.Mooncake.Master)
	}
	t.config = cfg
	if t.client, err = mooncakesdk.Open(ctx, cfg, logger); err != nil {
		return nil, errors.Join(err, t.close())
	}
	return t, nil
}

// close stops a pool started for the run.
func (t *poolTarget) close() error {
	if t.stop == nil {
		return nil
	}
	return t.stop()
}

// driverConfig is the Mooncake driver's settings from the store config,
// the SDK's defaults filled in (the report names them), its log quiet.
func (t *poolTarget) driverConfig() mooncakedrv.Config {
	c := mooncakedrv.ConfigFrom(t.config.Mooncake)
	c.Logger = slog.New(slog.DiscardHandler)
	if c.Workers == 0 {
		c.Workers = mooncakesdk.DefaultWorkers
	}
	if c.RowsPerCall == 0 {
		c.RowsPerCall = mooncakesdk.DefaultRowsPerCall
	}
	if c.BytesPerCall == 0 {
		c.BytesPerCall = mooncakesdk.DefaultBytesPerCall
	}
	return c
}
