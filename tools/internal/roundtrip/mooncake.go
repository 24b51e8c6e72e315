package roundtrip

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// Mooncake is the Mooncake pool a store config file describes. Each
// lender gets a driver of its own from mooncakedrv.Open: its own client
// of the pool, with its own transfer engine, in this one process.
type Mooncake struct {
	path   string
	cfg    mooncakesdk.StoreConfig
	logger *slog.Logger
	warm   int64 // bytes the floor puts and removes first (WarmFirst)
}

// MooncakeStore reads the store config at path (a refusal names the
// file, the section and the key) and returns the pool it describes.
// Nothing is opened until a lender asks for its driver. logger (nil:
// slog.Default()) receives the SDK's and the drivers' records.
func MooncakeStore(path string, logger *slog.Logger) (*Mooncake, error) {
	cfg, err := mooncakesdk.LoadStoreConfig(path)
	if err != nil {
		return nil, err
	}
	return &Mooncake{path: path, cfg: cfg, logger: logger}, nil
}

// Configure points cfg at the pool: its Store, and the backend settings
// of the file's [blob] section (key_prefix, when set, as the base of the
// run's keys; rows_per_call and bytes_per_call as the backends' caps).
func (m *Mooncake) Configure(cfg *Config) {
	cfg.Store = m
	if m.cfg.Blob.KeyPrefix != "" {
		cfg.KeyPrefix = m.cfg.Blob.KeyPrefix
	}
	cfg.RowsPerCall = m.cfg.Blob.RowsPerCall
	cfg.BytesPerCall = m.cfg.Blob.BytesPerCall
}

// Describe names the pool by its config file and master.
func (m *Mooncake) Describe() string {
	return fmt.Sprintf("the Mooncake pool of %s at master %s", m.path, m.cfg.Mooncake.Master)
}

// Workers is the file's [mooncake] workers.
func (m *Mooncake) Workers() int { return m.cfg.Mooncake.Workers }

// OpenDriver opens a driver over a new client of the pool
// (mooncakedrv.Open: environment check, library load and pin check, the
// wait for the master, setup). The driver owns its client: closing the
// driver destroys it.
func (m *Mooncake) OpenDriver(ctx context.Context, lender string) (contract.Driver, error) {
	d, _, err := mooncakedrv.Open(ctx, m.path, m.logger)
	if err != nil {
		return nil, fmt.Errorf("%s's driver: %w", lender, err)
	}
	return d, nil
}

// WarmFirst has the round trip put up to bytes straight on a client of
// the pool, or until the pool answers that it is full, and remove them
// before anything is measured (Report.Warmed), so that neither the job
// nor its raw floor pays the first writes into a fresh pool's segment
// (the provider faulting its pages in). For a pool started for the run
// only: a pool shared with others is not filled.
func (m *Mooncake) WarmFirst(bytes int64) { m.warm = bytes }

// warmBytes is what WarmFirst set.
func (m *Mooncake) warmBytes() int64 { return m.warm }
