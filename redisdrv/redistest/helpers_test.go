package redistest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/patience"
)

// waitBound bounds the waits of the tests that take a duration (a
// connection's deadline): patience.Wait(), 10 s × KVSHARE_WAIT_SCALE.
// The others wait through patience bounds (patience.For), extended only
// while the process was starved.
var waitBound = patience.Wait()

// boundedCtx is a context for one step of a test, ended with the test or
// when its patience bound runs out.
func boundedCtx(t testing.TB) context.Context {
	ctx, cancel := patience.For(t).Context(t.Context())
	t.Cleanup(cancel)
	return ctx
}

// waitUntil polls cond until it holds, failing t with msg when the
// test's patience bound runs out first.
func waitUntil(t testing.TB, msg string, cond func() bool) {
	t.Helper()
	ctx, cancel := patience.Bound{Span: patience.Wait(), What: t.Name() + ": " + msg, Logf: t.Logf}.Context(context.Background())
	defer cancel()
	for !cond() {
		if ctx.Err() != nil {
			if cond() {
				return
			}
			t.Fatalf("still not the case after the bound (%v, extended only while the process was starved): %s", patience.Wait(), msg)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// testLogger sends a server's events to t's output.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// newClient is a rueidis client to addr with one pipelined connection, no
// client-side cache and no retries (so a dropped connection shows as an
// error), closed with the test.
func newClient(t testing.TB, addr string) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:       []string{addr},
		ForceSingleClient: true,
		DisableCache:      true,
		DisableRetry:      true,
	})
	require.NoError(t, err, "connecting to %s", addr)
	t.Cleanup(c.Close)
	return c
}

// serverClient is s.Client(), closed with the test.
func serverClient(t testing.TB, s *Server) rueidis.Client {
	t.Helper()
	c, err := s.Client()
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}
