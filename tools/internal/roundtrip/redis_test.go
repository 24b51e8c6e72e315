package roundtrip

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/redisdrv/redistest"
	"github.com/kvshare/kvshare/tools/internal/redisconfig"
)

// The main job over a loopback Redis server: 256 rows of 64 KiB through
// two drivers, each with its own client, looked up, byte-identical,
// nothing lent after. Twice: the second run stores under its own prefix.
func TestRedisRoundTrip(t *testing.T) {
	path, s := redisconfig.ForTest(t, redistest.Options{})
	r, err := RedisStore(path, nil)
	require.NoError(t, err)
	assert.Equal(t, "the Redis server of "+path+" at "+s.Addr(), r.Describe())
	assert.Equal(t, 4, r.Workers())

	var prefixes []string
	for run := range 2 {
		c := Defaults()
		r.Configure(&c)
		c.Rows, c.RowBytes, c.ViewRows = 256, 64<<10, 32
		rep, err := Run(t.Context(), c, nil)
		require.NoError(t, err, "run %d", run)
		t.Logf("run %d under %s: publish %.2f GB/s, fetch %.2f GB/s", run, rep.KeyPrefix, rep.Publish.GBps(), rep.Fetch.GBps())
		assert.True(t, rep.OK(), "run %d: %+v", run, rep)
		assert.Equal(t, int64(256), rep.Publish.Rows[contract.Ready])
		assert.Equal(t, int64(256), rep.Fetch.Rows[contract.Ready])
		assert.Equal(t, 256, rep.Lookup.Present, "every row looked up present before the fetch")
		assert.Equal(t, 256, rep.Lookup.Bound)
		assert.Regexp(t, `^kvshare-test/roundtrip/`, rep.KeyPrefix)
		prefixes = append(prefixes, rep.KeyPrefix)
	}
	assert.NotEqual(t, prefixes[0], prefixes[1])
}

func TestRedisStoreRefusesABadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "redis.toml")
	require.NoError(t, os.WriteFile(path, []byte("[redis]\naddress = \"no-port\"\n"), 0o644))
	_, err := RedisStore(path, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path+": [redis] address: must be host:port")
}

// The main job over a loopback Redis Cluster: the rows spread over every
// node, each driver grouping them by the node that serves their slot,
// byte-identical after.
func TestRedisClusterRoundTrip(t *testing.T) {
	path, cl := redisconfig.ClusterForTest(t, redistest.ClusterOptions{})
	r, err := RedisStore(path, nil)
	require.NoError(t, err)
	assert.Equal(t, "the Redis Cluster of "+path+" (seeds "+strings.Join(cl.Addrs(), ", ")+")", r.Describe())

	c := Defaults()
	r.Configure(&c)
	c.Rows, c.RowBytes, c.ViewRows = 192, 16<<10, 64
	rep, err := Run(t.Context(), c, nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%+v", rep)
	assert.Equal(t, int64(192), rep.Publish.Rows[contract.Ready])
	assert.Equal(t, int64(192), rep.Fetch.Rows[contract.Ready])
	assert.Equal(t, 192, rep.Lookup.Present)
	for i := range cl.Nodes() {
		n, err := cl.Client(i)
		require.NoError(t, err)
		keys, err := n.Do(t.Context(), n.B().Dbsize().Build()).AsInt64()
		n.Close()
		require.NoError(t, err)
		assert.Positive(t, keys, "node %d holds some of the rows", i)
	}
}
