package consumer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/build/modules"
	"github.com/kvshare/kvshare/redisdrv/redistest"
)

// env is a getenv over a map.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func notOnPath(string) (string, error) { return "", errors.New("not found") }

// fakeServer writes an executable that answers --version as binary's
// version does and is never started.
func fakeServer(t *testing.T, version string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "redis-server")
	require.NoError(t, os.WriteFile(name, []byte("#!/bin/sh\necho '"+version+"'\n"), 0o755))
	return name
}

func TestRedisBinary(t *testing.T) {
	good := fakeServer(t, "Redis server v=7.0.15 sha=00000000:0 bits=64")
	old := fakeServer(t, "Redis server v=6.2.0 sha=00000000:0 bits=64")
	onPath := func(p string) func(string) (string, error) {
		return func(string) (string, error) { return p, nil }
	}
	for _, tc := range []struct {
		name     string
		vars     map[string]string
		lookPath func(string) (string, error)
		want     string
		err      error
		errText  string
	}{
		{"none anywhere", nil, notOnPath, "", nil, ""},
		{"the variable first", map[string]string{redistest.EnvServer: good}, onPath(old), good, nil, ""},
		{"else PATH", nil, onPath(good), good, nil, ""},
		{"the variable unusable", map[string]string{redistest.EnvServer: "relative/redis-server"}, onPath(good),
			"", redistest.ErrNotAbsolute, "the redis-server from KVSHARE_REDIS_SERVER (relative/redis-server) cannot be used"},
		{"the variable missing", map[string]string{redistest.EnvServer: filepath.Join(t.TempDir(), "none")}, notOnPath,
			"", redistest.ErrNoBinary, "from KVSHARE_REDIS_SERVER"},
		{"too old on PATH", nil, onPath(old), "", redistest.ErrVersion, "the redis-server from PATH (" + old + ")"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := redisBinary(context.Background(), env(tc.vars), tc.lookPath)
			if tc.err == nil {
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
				return
			}
			require.ErrorIs(t, err, tc.err)
			assert.ErrorContains(t, err, tc.errText)
			assert.Empty(t, got)
		})
	}
}

func TestStartServerWithoutOneNeeded(t *testing.T) {
	var w strings.Builder
	r, ran, err := startServer(context.Background(), modules.Consumer{Dir: "examples/c"}, env(nil), notOnPath, &w)
	require.NoError(t, err)
	assert.True(t, ran)
	assert.Empty(t, r.env)
	assert.NoError(t, stopServer(r, nil))
	assert.Empty(t, w.String())
}

func TestStartServerRefusesAnUnknownServer(t *testing.T) {
	var w strings.Builder
	_, ran, err := startServer(context.Background(), modules.Consumer{Dir: "examples/c", Server: "etcd"}, env(nil), notOnPath, &w)
	assert.ErrorContains(t, err, `build/modules names server "etcd", which the consumer check cannot start (want "redis" or none)`)
	assert.False(t, ran)
}

// Without a redis-server the consumer is built, not run, and one line
// says so.
func TestStartServerWithoutARedisServer(t *testing.T) {
	var w strings.Builder
	c := modules.Consumer{Dir: "examples/consumer-redis", Server: modules.ServerRedis}
	_, ran, err := startServer(context.Background(), c, env(nil), notOnPath, &w)
	require.NoError(t, err)
	assert.False(t, ran)
	assert.Equal(t, "consumers: examples/consumer-redis built, not run: no redis-server (set KVSHARE_REDIS_SERVER or install redis-server)\n", w.String())
}

// A variable that names an unusable binary fails the check: it was
// asked for.
func TestStartServerWithAnUnusableVariable(t *testing.T) {
	var w strings.Builder
	c := modules.Consumer{Dir: "examples/consumer-redis", Server: modules.ServerRedis}
	_, ran, err := startServer(context.Background(), c, env(map[string]string{redistest.EnvServer: "redis-server"}), notOnPath, &w)
	require.ErrorIs(t, err, redistest.ErrNotAbsolute)
	assert.False(t, ran)
}

func TestStopServerJoinsItsFailure(t *testing.T) {
	runErr := errors.New("running it: exit status 1")
	r := running{stop: func() error { return errors.New("pid 7 survived") }}
	err := stopServer(r, runErr)
	assert.ErrorIs(t, err, runErr)
	assert.ErrorContains(t, err, "stopping its server: pid 7 survived")
	assert.NoError(t, stopServer(running{stop: func() error { return nil }}, nil))
}
