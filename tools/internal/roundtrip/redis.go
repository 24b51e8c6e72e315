package roundtrip

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/redisdrv"
)

// Redis is the Redis server, or Redis Cluster, a store file ([blob] and
// [redis]) describes. Each lender gets a driver of its own from
// redisdrv.Open: its own client of the server (of each node), with its
// own connections.
type Redis struct {
	path   string
	cfg    redisdrv.StoreConfig
	logger *slog.Logger
}

// RedisStore reads the store file at path (a refusal names the file,
// the section and the key) and returns the server it describes. Nothing
// is connected until a lender asks for its driver. logger (nil:
// slog.Default()) receives the drivers' records.
func RedisStore(path string, logger *slog.Logger) (*Redis, error) {
	cfg, err := redisdrv.LoadStoreConfig(path)
	if err != nil {
		return nil, err
	}
	return &Redis{path: path, cfg: cfg, logger: logger}, nil
}

// Configure points cfg at the server: its Store, and the backend
// settings of the file's [blob] section (key_prefix, when set, as the
// base of the run's keys; rows_per_call and bytes_per_call as the
// backends' caps).
func (r *Redis) Configure(cfg *Config) {
	cfg.Store = r
	if r.cfg.Blob.KeyPrefix != "" {
		cfg.KeyPrefix = r.cfg.Blob.KeyPrefix
	}
	cfg.RowsPerCall = r.cfg.Blob.RowsPerCall
	cfg.BytesPerCall = r.cfg.Blob.BytesPerCall
}

// Describe names the server by its store file and address, or a
// cluster by its store file and seeds.
func (r *Redis) Describe() string {
	if rc := r.cfg.Redis; rc.Cluster {
		return fmt.Sprintf("the Redis Cluster of %s (seeds %s)", r.path, strings.Join(rc.Seeds(), ", "))
	}
	return fmt.Sprintf("the Redis server of %s at %s", r.path, r.cfg.Redis.Address)
}

// Workers is the file's [redis] workers.
func (r *Redis) Workers() int { return r.cfg.Redis.Workers }

// OpenDriver opens a driver over a new client of the server
// (redisdrv.Open: the file checked again, the password variable read,
// the connection made). The driver owns its client: closing the driver
// closes it.
func (r *Redis) OpenDriver(ctx context.Context, lender string) (contract.Driver, error) {
	d, _, err := redisdrv.Open(ctx, r.path, r.logger)
	if err != nil {
		return nil, fmt.Errorf("%s's driver: %w", lender, err)
	}
	return d, nil
}
