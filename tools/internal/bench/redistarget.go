package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/kvshare/kvshare/redisdrv"
	"github.com/kvshare/kvshare/redisdrv/redistest"
	"github.com/kvshare/kvshare/tools/internal/redisconfig"
)

// redisTarget is the Redis server or Redis Cluster measurement 7 runs
// against: its store file's settings, and how to give back one started
// for the run.
type redisTarget struct {
	config redisdrv.StoreConfig
	// describe names the server or cluster in the report.
	describe string
	// lender names kvshare's lender to the observer: "redis", or
	// "redis cluster" for the cluster measured beside a server.
	lender string
	// stop stops a server or cluster started for the run (nil for a
	// given one). It runs after every client is closed.
	stop func() error
}

// openRedis reads the store file StorePath (of a server or a cluster),
// or starts from the redis-server binary Server a loopback server, or
// with Cluster a loopback three-node cluster, with a MaxMemory-byte
// limit (a node) and the noeviction policy (its store file written into
// a temporary folder).
func openRedis(ctx context.Context, o redisOptions, logger *slog.Logger) (*redisTarget, error) {
	t := &redisTarget{lender: Redis.String()}
	path := o.StorePath
	switch {
	case o.Server != "" && o.Cluster:
		started, c, stop, err := redisconfig.StartCluster(ctx, o.Server, redistest.ClusterOptions{MaxMemory: o.MaxMemory, Policy: "noeviction"}, logger)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		path, t.stop = started, stop
		t.describe = startedCluster(c, o)
	case o.Server != "":
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
	switch {
	case t.describe != "":
	case cfg.Redis.Cluster:
		t.describe = fmt.Sprintf("the Redis Cluster of %s (seeds %s)", path, strings.Join(cfg.Redis.Seeds(), ", "))
	default:
		t.describe = fmt.Sprintf("the Redis server of %s at %s", path, cfg.Redis.Address)
	}
	t.config = cfg
	return t, nil
}

// openBeside starts the loopback three-node cluster measured beside the
// server Server started (Beside): each node as that server, MaxMemory
// bytes and noeviction. A binary without redis-cli beside it
// (redistest.ErrNoCLI) cannot make a cluster: skipped says so, and the
// target is nil.
func openBeside(ctx context.Context, o redisOptions, logger *slog.Logger) (t *redisTarget, skipped string, err error) {
	o.Cluster = true
	t, err = openRedis(ctx, o, logger)
	if errors.Is(err, redistest.ErrNoCLI) {
		return nil, "skipped: " + strings.TrimPrefix(err.Error(), "bench: "), nil
	}
	if err != nil {
		return nil, "", err
	}
	t.lender = Redis.String() + " cluster"
	return t, "", nil
}

// startedCluster describes a cluster started for the run.
func startedCluster(c *redistest.Cluster, o redisOptions) string {
	return fmt.Sprintf("a loopback Redis Cluster of %d nodes, redis-server %s started from %s at %s (maxmemory %s a node, noeviction, nothing on disk)",
		len(c.Nodes()), c.Node(0).Version(), o.Server, strings.Join(c.Addrs(), ", "), size(o.MaxMemory))
}

// close stops a server or cluster started for the run.
func (t *redisTarget) close() error {
	if t.stop == nil {
		return nil
	}
	return t.stop()
}
