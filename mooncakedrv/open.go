package mooncakedrv

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// Open reads the store config file at configPath, opens the Mooncake
// client it describes (environment check, library load and pin check,
// the wait for the master, setup: see mooncakesdk.Open) and returns a
// driver over it with the file's [mooncake] worker and part settings,
// and the file's [blob] settings for the backend. logger (nil:
// slog.Default()) receives the SDK's and the driver's logs.
//
// Errors name what was wrong: the file, section and key of a config
// refusal (mooncakesdk.ErrConfig), the variable of an environment
// refusal, the library, the master's address. On any error nothing is
// left open.
func Open(ctx context.Context, configPath string, logger *slog.Logger) (*Driver, mooncakesdk.BlobConfig, error) {
	if logger == nil {
		logger = slog.Default()
	}
	sc, err := mooncakesdk.LoadStoreConfig(configPath)
	if err != nil {
		return nil, mooncakesdk.BlobConfig{}, err
	}
	client, err := mooncakesdk.Open(ctx, sc, logger)
	if err != nil {
		return nil, mooncakesdk.BlobConfig{}, err
	}
	cfg := ConfigFrom(sc.Mooncake)
	cfg.Logger = logger
	d, err := New(client, cfg)
	if err != nil {
		if derr := client.Destroy(); derr != nil {
			logger.Warn("mooncakedrv: destroying the client of a refused config", "err", derr)
		}
		return nil, mooncakesdk.BlobConfig{}, fmt.Errorf("mooncakedrv: %s: %w", configPath, err)
	}
	return d, sc.Blob, nil
}
