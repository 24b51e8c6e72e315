package redisdrv

import (
	"context"
	"log/slog"
	"testing"
	"time"
	"unsafe"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/patience"
	"github.com/kvshare/kvshare/redisdrv/redistest"
)

// spanBase is the address of b's first byte.
func spanBase(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// testLogger sends a driver's logs to the test's output.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// server is a test's redis-server (skipping the test when the tier is
// off) and a raw client straight to it.
type server struct {
	*redistest.Server
	raw rueidis.Client
}

// startServer starts a server of the test's own with o.
func startServer(t *testing.T, o redistest.Options) *server {
	t.Helper()
	s := redistest.StartForTest(t, o)
	raw, err := s.Client()
	require.NoError(t, err)
	t.Cleanup(raw.Close)
	return &server{Server: s, raw: raw}
}

// do runs one raw command and returns its reply; a connection a kill or
// restart broke is tried again, twice at most. The call's context has a
// deadline (patience.Wait()): without one, rueidis queues the command
// to the connection's background writer, and its retry after a
// connection a kill broke recycles a command that writer read, which
// the race detector reports as a race inside rueidis.
func (s *server) do(t testing.TB, build func(b rueidis.Builder) rueidis.Completed) rueidis.RedisResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience.Wait())
	defer cancel()
	res := s.raw.Do(ctx, build(s.raw.B()))
	for range 2 {
		if res.NonRedisError() == nil || ctx.Err() != nil {
			break
		}
		res = s.raw.Do(ctx, build(s.raw.B()))
	}
	return res
}

// seed stores data under key, as another writer would.
func (s *server) seed(t testing.TB, key string, data []byte) {
	t.Helper()
	require.NoError(t, s.do(t, func(b rueidis.Builder) rueidis.Completed {
		return b.Set().Key(key).Value(rueidis.BinaryString(data)).Build()
	}).Error())
}

// object returns the value under key, and whether there is one.
func (s *server) object(t testing.TB, key string) ([]byte, bool) {
	t.Helper()
	v, err := s.do(t, func(b rueidis.Builder) rueidis.Completed { return b.Get().Key(key).Build() }).AsBytes()
	if rueidis.IsRedisNil(err) {
		return nil, false
	}
	require.NoError(t, err)
	return v, true
}

// setMaxMemory sets the server's maxmemory and policy.
func (s *server) setMaxMemory(t testing.TB, bytes int64, policy string) {
	t.Helper()
	require.NoError(t, s.do(t, func(b rueidis.Builder) rueidis.Completed {
		return b.ConfigSet().ParameterValue().ParameterValue("maxmemory", itoa(bytes)).ParameterValue("maxmemory-policy", policy).Build()
	}).Error())
}

// driverVia returns a driver whose client talks to addr (the server, or
// a proxy in front of it), closed at the end of the test unless the
// test closed it.
func driverVia(t *testing.T, addr string, cfg Config) *Driver {
	t.Helper()
	full, err := cfg.withDefaults()
	require.NoError(t, err)
	sc := StoreConfig{File: "test", Redis: RedisConfig{Address: addr, DialTimeout: patience.Scaled(5 * time.Second),
		Workers: full.Workers, RowsPerCall: full.RowsPerCall, BytesPerCall: full.BytesPerCall, CallTimeout: cfg.CallTimeout}}
	opt, err := sc.ClientOption()
	require.NoError(t, err)
	client, err := rueidis.NewClient(opt)
	require.NoError(t, err)
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	d, err := New(client, cfg)
	require.NoError(t, err)
	return d
}
