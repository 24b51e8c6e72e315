package mooncakedrv

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// Open reads the store config file at configPath and opens it as
// [OpenConfig] does, returning the file's [blob] settings as well, for
// the backend (binding.FromBlob).
func Open(ctx context.Context, configPath string, logger *slog.Logger) (*Driver, mooncakesdk.BlobConfig, error) {
	sc, err := mooncakesdk.LoadStoreConfig(configPath)
	if err != nil {
		return nil, mooncakesdk.BlobConfig{}, err
	}
	d, err := OpenConfig(ctx, sc, logger)
	if err != nil {
		return nil, mooncakesdk.BlobConfig{}, err
	}
	return d, sc.Blob, nil
}

// OpenConfig opens the Mooncake client a parsed store config describes
// (environment check, library load and pin check, the wait for the
// master, setup: see mooncakesdk.Open) and returns a driver over it with
// the config's [mooncake] worker and part settings. It is for an engine
// with a config system of its own: build the StoreConfig there (or parse
// it with mooncakesdk.ParseStoreConfig); it is checked again here. logger
// (nil: slog.Default()) receives the SDK's and the driver's logs.
//
// Errors name what was wrong: the file, section and key of a config
// refusal (mooncakesdk.ErrConfig), the variable of an environment
// refusal, the library, the master's address. On any error nothing is
// left open.
func OpenConfig(ctx context.Context, sc mooncakesdk.StoreConfig, logger *slog.Logger) (*Driver, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	client, err := mooncakesdk.Open(ctx, sc, logger)
	if err != nil {
		return nil, err
	}
	cfg := ConfigFrom(sc.Mooncake)
	cfg.Logger = logger
	cfg.Reopen = func(ctx context.Context) (mooncakesdk.Client, error) { return mooncakesdk.Open(ctx, sc, logger) }
	d, err := New(client, cfg)
	if err != nil {
		if derr := client.Destroy(); derr != nil {
			logger.Warn("mooncakedrv: destroying the client of a refused config", "err", derr)
		}
		return nil, fmt.Errorf("mooncakedrv: %s: %w", sc.File, err)
	}
	return d, nil
}
