package redisconfig

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/redisdrv"
	"github.com/kvshare/kvshare/redisdrv/redistest"
)

func TestTextIsAStoreFileTheDriverReads(t *testing.T) {
	cfg, err := redisdrv.ParseStoreConfig("redis.toml", []byte(Text("127.0.0.1:16379", "team/kv", 1<<30, "noeviction")))
	require.NoError(t, err)
	assert.Equal(t, "team/kv", cfg.Blob.KeyPrefix)
	assert.Equal(t, "127.0.0.1:16379", cfg.Redis.Address)
	assert.Equal(t, int64(1<<30), cfg.Redis.MaxMemory)
	assert.Equal(t, "noeviction", cfg.Redis.MaxMemoryPolicy)

	cfg, err = redisdrv.ParseStoreConfig("redis.toml", []byte(Text("127.0.0.1:16379", "kvshare", 0, "")))
	require.NoError(t, err)
	assert.Zero(t, cfg.Redis.MaxMemory, "unchecked")
	assert.Empty(t, cfg.Redis.MaxMemoryPolicy)
}

func TestBinaryPaths(t *testing.T) {
	for _, c := range []struct{ binary, want string }{
		{"", "no redis-server binary given"},
		{"no-such-redis-server-binary", `"no-such-redis-server-binary"`},
	} {
		_, err := absBinary(c.binary)
		require.Error(t, err, c.binary)
		assert.Contains(t, err.Error(), c.want)
	}
	got, err := absBinary("/usr/bin/redis-server")
	require.NoError(t, err)
	assert.Equal(t, "/usr/bin/redis-server", got)
	got, err = absBinary("./bin/redis-server")
	require.NoError(t, err)
	assert.True(t, len(got) > 0 && got[0] == '/', got)
}

// Start refuses a binary that is not there, naming it, and leaves
// nothing behind.
func TestStartNamesAMissingBinary(t *testing.T) {
	_, _, _, err := Start(t.Context(), "/nonexistent/redis-server", redistest.Options{}, nil)
	require.ErrorIs(t, err, redistest.ErrNoBinary)
	assert.Contains(t, err.Error(), "/nonexistent/redis-server")
}

func TestStartWritesAFileForTheServer(t *testing.T) {
	binary := redistest.Require(t)
	path, s, stop, err := Start(t.Context(), binary, redistest.Options{Dir: t.TempDir()}, nil)
	require.NoError(t, err)
	cfg, err := redisdrv.LoadStoreConfig(path)
	require.NoError(t, err)
	assert.Equal(t, s.Addr(), cfg.Redis.Address)
	assert.Equal(t, "kvshare", cfg.Blob.KeyPrefix)
	assert.Equal(t, int64(DefaultMaxMemory), cfg.Redis.MaxMemory)
	assert.Equal(t, DefaultPolicy, cfg.Redis.MaxMemoryPolicy)
	require.NoError(t, stop())
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "the folder is removed")
	assert.Zero(t, s.PID(), "the server is stopped")
}

func TestClusterTextIsAStoreFileTheDriverReads(t *testing.T) {
	seeds := []string{"127.0.0.1:17001", "127.0.0.1:17002", "127.0.0.1:17003"}
	cfg, err := redisdrv.ParseStoreConfig("cluster.toml", []byte(ClusterText(seeds, "team/kv", 1<<30, "noeviction")))
	require.NoError(t, err)
	assert.Equal(t, "team/kv", cfg.Blob.KeyPrefix)
	assert.True(t, cfg.Redis.Cluster)
	assert.Empty(t, cfg.Redis.Address)
	assert.Equal(t, seeds, cfg.Redis.Addresses)
	assert.Equal(t, seeds, cfg.Redis.Seeds())
	assert.Zero(t, cfg.Redis.DB, "a cluster has db 0 only")
	assert.Equal(t, int64(1<<30), cfg.Redis.MaxMemory)
	assert.Equal(t, "noeviction", cfg.Redis.MaxMemoryPolicy)

	cfg, err = redisdrv.ParseStoreConfig("cluster.toml", []byte(ClusterText(seeds[:1], "kvshare", 0, "")))
	require.NoError(t, err)
	assert.Equal(t, seeds[:1], cfg.Redis.Addresses)
	assert.Zero(t, cfg.Redis.MaxMemory, "unchecked")
	assert.Empty(t, cfg.Redis.MaxMemoryPolicy)
}

// StartCluster refuses a binary that is not there, naming it, and
// leaves nothing behind.
func TestStartClusterNamesAMissingBinary(t *testing.T) {
	_, _, _, err := StartCluster(t.Context(), "/nonexistent/redis-server", redistest.ClusterOptions{}, nil)
	require.ErrorIs(t, err, redistest.ErrNoBinary)
	assert.Contains(t, err.Error(), "/nonexistent/redis-server")
}

func TestStartClusterWritesAFileForTheCluster(t *testing.T) {
	binary := redistest.Require(t)
	path, c, stop, err := StartCluster(t.Context(), binary, redistest.ClusterOptions{Dir: t.TempDir()}, nil)
	require.NoError(t, err)
	cfg, err := redisdrv.LoadStoreConfig(path)
	require.NoError(t, err)
	assert.True(t, cfg.Redis.Cluster)
	assert.Equal(t, c.Addrs(), cfg.Redis.Addresses)
	assert.Len(t, cfg.Redis.Addresses, 3, "three nodes, each a seed")
	assert.Equal(t, "kvshare", cfg.Blob.KeyPrefix)
	assert.Equal(t, int64(DefaultMaxMemory), cfg.Redis.MaxMemory)
	assert.Equal(t, DefaultPolicy, cfg.Redis.MaxMemoryPolicy)
	require.NoError(t, stop())
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "the folder is removed")
	for i, s := range c.Nodes() {
		assert.Zero(t, s.PID(), "node %d is stopped", i)
	}
}
