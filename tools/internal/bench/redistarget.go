package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/kvshare/kvshare/redisdrv"
	"github.com/kvshare/kvshare/redisdrv/redistest"
	"github.com/kvshare/kvshare/tools/internal/redisconfig"
)

// redisTarget is the Redis server measurement 7 runs against: its store
// file's settings, and how to give back a server started for the run.
type redisTarget struct {
	config redisdrv.StoreConfig
	// describe names the server in the report.
	describe string
	// stop stops a server started for the run (nil for a given one).
	// It runs after every client is closed.
	stop func() error
}

// openRedis reads the store file StorePath, or starts a loopback server
// from the redis-server binary Server with a MaxMemory-byte limit and the
// noeviction policy (its store file written into a temporary folder).
func openRedis(ctx context.Context, o redisOptions, logger *slog.Logger) (*redisTarget, error) {
	t := &redisTarget{}
	path := o.StorePath
	if o.Server != "" {
		started, s, stop, err := redisconfig.Start(ctx, o.Server, redistest.Options{MaxMemory: o.MaxMemory, Policy: "noeviction"}, logger)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		path, t.stop = started, stop
		t.describe = fmt.Sprintf("a loopback redis-server %s started from %s at %s (maxmemory %s, noeviction, nothing on disk)",
			s.Version(), o.Server, s.Addr(), size(o.MaxMemory))
	}
	cfg, err := redisdrv.LoadStoreConfig(path)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("bench: %w", err), t.close())
	}
	if t.describe == "" {
		t.describe = fmt.Sprintf("the Redis server of %s at %s", path, cfg.Redis.Address)
	}
	t.config = cfg
	return t, nil
}

// close stops a server started for the run.
func (t *redisTarget) close() error {
	if t.stop == nil {
		return nil
	}
	return t.stop()
}
