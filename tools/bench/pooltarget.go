package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

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
func openPool(ctx context.Context, o PoolOptions, logger *slog.Logger) (*poolTarget, error) {
	t := &poolTarget{warm: 2 * o.Bytes}
	path := o.StorePath
	if o.MooncakeDir != "" {
		dir, err := filepath.Abs(o.MooncakeDir)
		if err != nil {
			return nil, err
		}
		p, err := pool.Start(ctx, pool.Options{Dir: dir, SegmentSize: o.Segment, Logger: logger})
		if err != nil {
			return nil, fmt.Errorf("bench: starting a pool from %s: %w", dir, err)
		}
		tmp, err := os.MkdirTemp("", "kvshare-bench-")
		if err != nil {
			return nil, errors.Join(err, p.Stop())
		}
		t.stop = func() error { return errors.Join(p.Stop(), os.RemoveAll(tmp)) }
		text, err := poolconfig.Text(dir, p, "kvshare")
		if err != nil {
			return nil, errors.Join(err, t.stop())
		}
		path = filepath.Join(tmp, "store.toml")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return nil, errors.Join(err, t.stop())
		}
		for _, kv := range p.ClientEnv() {
			name, value, _ := strings.Cut(kv, "=")
			if err := os.Setenv(name, value); err != nil {
				return nil, errors.Join(err, t.stop())
			}
		}
		t.describe = fmt.Sprintf("a loopback pool started from %s (master %s, a %s segment)", dir, p.MasterAddress(), size(o.Segment))
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
