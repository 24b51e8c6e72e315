// Package pooltest is the real-pool tier's switch for tests: Dir skips a
// test with one line when the tier is off and fails it when the tier is on
// but its Mooncake folder cannot be used; Start gives a test a pool that
// is stopped, and its processes checked gone, when the test ends.
package pooltest

import (
	"log/slog"
	"testing"

	"github.com/kvshare/kvshare/mooncakedrv/pool"
)

// Dir returns the tier's Mooncake folder (pool.EnvDir). Off: t skips with
// pool.TierOff. On but unusable: t fails, saying why.
func Dir(t testing.TB) string {
	t.Helper()
	dir, on, err := pool.Tier()
	if !on {
		t.Skip(pool.TierOff)
	}
	if err != nil {
		t.Fatalf("real-pool tier on (%s=%q) but unusable: %v", pool.EnvDir, dir, err)
	}
	return dir
}

// Start starts a pool with opts (its Dir from Dir(t) when empty, its logs
// under t.TempDir() when LogDir is empty, its events in t's output when
// Logger is nil) or fails t. At cleanup it logs
// the processes' log tails if t failed, stops the pool and fails t if a
// process survived.
func Start(t testing.TB, opts pool.Options) *pool.Pool {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = Dir(t)
	}
	if opts.LogDir == "" {
		opts.LogDir = t.TempDir()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	p, err := pool.Start(t.Context(), opts)
	if err != nil {
		t.Fatalf("starting a pool from %s: %v", opts.Dir, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("master log (tail):\n%s\nprovider log (tail):\n%s", p.LogTail(pool.Master), p.LogTail(pool.Provider))
		}
		if err := p.Stop(); err != nil {
			t.Errorf("stopping the pool: %v", err)
		}
	})
	return p
}
