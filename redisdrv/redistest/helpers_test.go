package redistest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"
)

// waitBound bounds every wait in the tests.
const waitBound = 10 * time.Second

// boundedCtx is a context for one step of a test, ended with the test.
func boundedCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	t.Cleanup(cancel)
	return ctx
}

// waitUntil polls cond until it holds, failing t with msg after waitBound.
func waitUntil(t testing.TB, msg string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not the case after %v: %s", waitBound, msg)
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
