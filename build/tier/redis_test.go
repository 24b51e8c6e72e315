package tier

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/build/modules"
	"github.com/kvshare/kvshare/redisdrv/redistest"
)

func TestRedisIsOffWithoutItsVariable(t *testing.T) {
	var w strings.Builder
	require.NoError(t, Redis("../..", modules.Repo, func(string) string { return "" }, &w))
	assert.Equal(t, "redis: off (KVSHARE_REDIS_SERVER is not set; set it to the absolute path of a redis-server binary to run the Redis tier)\n", w.String())
}

// script writes an executable shell script with body into a fresh folder.
func script(t *testing.T, mode os.FileMode, body string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "redis-server")
	require.NoError(t, os.WriteFile(name, []byte("#!/bin/sh\n"+body), mode))
	return name
}

// A binary that cannot be used fails the tier, saying why, before any
// test binary is built.
func TestRedisRefusesAnUnusableBinary(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, binary string
		want         error
	}{
		{"relative", "bin/redis-server", redistest.ErrNotAbsolute},
		{"missing", filepath.Join(dir, "none"), redistest.ErrNoBinary},
		{"a folder", dir, redistest.ErrNoBinary},
		{"not executable", script(t, 0o644, "echo 'Redis server v=7.0.15'\n"), redistest.ErrNotExecutable},
		{"failing", script(t, 0o755, "echo broken >&2\nexit 3\n"), redistest.ErrVersion},
		{"not a server", script(t, 0o755, "echo 'redis-cli 7.0.15'\n"), redistest.ErrVersion},
		{"too old", script(t, 0o755, "echo 'Redis server v=6.2.0 sha=0'\n"), redistest.ErrVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w strings.Builder
			err := Redis("../..", modules.Repo, func(k string) string {
				if k == EnvRedisServer {
					return tc.binary
				}
				return ""
			}, &w)
			require.ErrorIs(t, err, tc.want)
			assert.ErrorContains(t, err, "KVSHARE_REDIS_SERVER=")
			assert.Empty(t, w.String(), "nothing runs")
		})
	}
}

// The tier's off marker is what redistest's tests skip with.
func TestRedisOffMarkerIsRedistests(t *testing.T) {
	assert.True(t, strings.HasPrefix(redistest.TierOff, redisOff))
	assert.Equal(t, redistest.EnvServer, EnvRedisServer)
}

// After the tests, the tier soaks one server, then a cluster, each over
// a store of its own started by the soak's flags, in the private network
// when there is one.
func TestRedisTierSoaksAServerThenACluster(t *testing.T) {
	s := redisTier("/usr/bin/redis-server", "20m")
	assert.Equal(t, []string{EnvRedisServer + "=/usr/bin/redis-server"}, s.env)
	require.Len(t, s.soaks, 2)
	assert.Equal(t, []string{"/tmp/kvshare", "soak", "-short", "--redis-server", "/usr/bin/redis-server"}, s.soaks[0].args(nil, "/tmp/kvshare"))
	assert.Equal(t, "a loopback redis-server", s.soaks[0].store)
	assert.Equal(t, []string{"unshare", "-n", "/tmp/kvshare", "soak", "-short", "--redis-server", "/usr/bin/redis-server", "--redis-cluster"},
		s.soaks[1].args([]string{"unshare", "-n"}, "/tmp/kvshare"))
	assert.Equal(t, "a loopback three-node Redis Cluster", s.soaks[1].store)
}

// A soak that fails says so on its own line, with its time, and names
// its store; one that passes says how long it took.
func TestStoreTierSoakLines(t *testing.T) {
	s := storeTier{name: "redis"}
	var w strings.Builder
	require.NoError(t, s.soak(storeSoak{store: "a loopback redis-server"}, []string{"true"}, "kvshare", nil, &w))
	assert.Regexp(t, `^redis: kvshare soak -short over a loopback redis-server\nredis: kvshare soak over a loopback redis-server passed in \S+\n$`, w.String())

	w.Reset()
	err := s.soak(storeSoak{store: "a loopback three-node Redis Cluster"}, []string{"false"}, "kvshare", nil, &w)
	require.EqualError(t, err, "kvshare soak over a loopback three-node Redis Cluster")
	assert.Contains(t, w.String(), "redis: FAIL kvshare soak over a loopback three-node Redis Cluster after ")
	assert.Contains(t, w.String(), ": exit status 1\n")
}
