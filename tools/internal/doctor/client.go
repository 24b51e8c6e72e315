package doctor

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// openClient opens a client as the driver does (mooncakesdk.Open: the
// same config, environment, library and master checks, then setup) and
// asks it for a health check. Setup itself cannot be interrupted: wait
// bounds the wait for it, after which the handle is destroyed as soon as
// setup returns. The error, nil when the client is returned, is Open's or
// the health check's, for the master's finding (masterAnswer).
func openClient(ctx context.Context, cfg mooncakesdk.StoreConfig, wait time.Duration, logger *slog.Logger) (mooncakesdk.Client, Finding, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	start := time.Now()
	c, err := mooncakesdk.Open(ctx, cfg, logger)
	took := time.Since(start)
	if err != nil {
		return nil, fail(CheckClient, "%v%s", err, setupHint(err)), err
	}
	if err := c.HealthCheck(); err != nil {
		f := fail(CheckClient, "set up, but the health check answered: %v", err)
		if derr := c.Destroy(); derr != nil {
			f.Detail += "; destroying it: " + derr.Error()
		}
		return nil, f, err
	}
	mounts := "mounts no segment (global_segment_size 0): it stores on the pool's segment providers"
	if n := cfg.Mooncake.GlobalSegmentSize; n > 0 {
		mounts = "mounts " + size(int64(n)) + " of its own memory into the pool: what is stored there vanishes when it is destroyed"
	}
	return c, ok(CheckClient, "set up in %v, health check ok; %s", took.Round(time.Millisecond), mounts), nil
}

func setupHint(err error) string {
	if errors.Is(err, mooncakesdk.ErrSetup) {
		return " (the library's log above says why; check [mooncake] master (a master of the library's version must answer there, not only accept), local_hostname, metadata_server, protocol and devices)"
	}
	return ""
}
