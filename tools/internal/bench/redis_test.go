package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/redisdrv/redistest"
	"github.com/kvshare/kvshare/redisdrv/slotmap"
	"github.com/kvshare/kvshare/tools/internal/redisconfig"
)

// The floor's parts are cut as kvshare cuts them: views first, then the
// driver's rows and bytes a part, a larger row alone.
func TestRedisPartsAreCutAsKvshareCutsThem(t *testing.T) {
	keys := make([]string, 10)
	slots := make([][]byte, 10)
	lens := func(parts []redisPart) []int {
		var out []int
		for _, p := range parts {
			out = append(out, len(p.keys))
			assert.Len(t, p.slots, len(p.keys))
		}
		return out
	}
	assert.Equal(t, []int{3, 1, 3, 1, 2}, lens(redisParts(keys, slots, 100, 4, 3, 1<<20)), "views of 4, parts of 3 rows")
	assert.Equal(t, []int{2, 2, 2, 2, 2}, lens(redisParts(keys, slots, 100, 10, 64, 250)), "parts of 250 bytes: 2 rows")
	assert.Equal(t, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, lens(redisParts(keys, slots, 100, 10, 64, 50)), "a row over the cap goes alone")
	p := redisParts(keys, slots, 100, 10, 4, 1<<20)
	assert.Equal(t, int64(400), p[0].bytes)
}

// Measurement 7 over a given server: every row Ready, one figure a
// repetition, its goals judged, and nothing left on the server.
func TestRedisMeasurementOverAServer(t *testing.T) {
	path, s := redisconfig.ForTest(t, redistest.Options{})
	o := tiny()
	o.Only = []Measurement{Redis}
	o.Redis.StorePath = path
	var steps []string
	rep, err := Run(t.Context(), o, func(_, _ int, what string) { steps = append(steps, what) }, nil)
	require.NoError(t, err)
	d := rep.Redis
	require.NotNil(t, d)
	assert.Empty(t, d.Skipped)
	assert.Equal(t, "the Redis server of "+path+" at "+s.Addr(), d.Server)
	assert.Regexp(t, `^kvshare-test/bench/\d{8}t\d{6}z-[0-9a-f]{8}$`, d.KeyPrefix)
	assert.Equal(t, 4, d.Workers)
	assert.Equal(t, 64, d.RowsPerCall)
	assert.Len(t, steps, units(o)+1, "every unit, then done")
	require.Len(t, d.Cases, 2)
	for _, c := range d.Cases {
		assert.Equal(t, max(6, int(o.Redis.Bytes/c.RowBytes)), c.Rows)
		assert.Zero(t, c.KvshareNotReady, "every row Ready")
		assert.Zero(t, c.FloorNotReady)
		assert.Zero(t, c.PlainNotReady)
		for _, sp := range []spread{c.KvsharePutMBs, c.KvshareGetMBs, c.FloorPutMBs, c.FloorGetMBs, c.PlainPutMBs, c.PlainGetMBs, c.PutRatio, c.GetRatio} {
			assert.Equal(t, o.Reps, sp.N, "one figure a repetition")
			assert.Positive(t, sp.Median)
		}
	}
	assert.Len(t, rep.Goals, 4, "put and get at each size")
	var out bytes.Buffer
	WriteTable(&out, rep)
	for _, want := range []string{"\n7. Redis: the Redis server of " + path, "   4 KiB ", "   16 KiB ", "rows over Redis: put MB/s / the same commands pipelined"} {
		assert.Contains(t, out.String(), want)
	}

	c, err := s.Client()
	require.NoError(t, err)
	defer c.Close()
	n, err := c.Do(t.Context(), c.B().Dbsize().Build()).AsInt64()
	require.NoError(t, err)
	assert.Zero(t, n, "every side's keys are deleted after each round")
}

// With a redis-server binary the measurement starts a server of its own
// and stops it at the end.
func TestRedisMeasurementStartsAServer(t *testing.T) {
	binary := redistest.Require(t)
	o := tiny()
	o.Reps = 1
	o.Only = []Measurement{Redis}
	o.Redis.Server = binary
	o.Redis.RowSizes = []int64{4096}
	var steps []string
	rep, err := Run(t.Context(), o, func(_, _ int, what string) { steps = append(steps, what) }, nil)
	require.NoError(t, err)
	require.NotNil(t, rep.Redis)
	assert.Contains(t, rep.Redis.Server, "a loopback redis-server ")
	assert.Contains(t, rep.Redis.Server, "started from "+binary)
	assert.Contains(t, rep.Redis.Server, "maxmemory 64 MiB, noeviction")
	assert.Empty(t, rep.Redis.Nodes, "one server")
	require.Len(t, rep.Redis.Cases, 1)
	assert.Zero(t, rep.Redis.Cases[0].KvshareNotReady)
	assert.Zero(t, rep.Redis.Cases[0].Parts, "counted over a cluster only")
	assert.Len(t, rep.Goals, 2, "the cluster beside has no goal")
	assert.Len(t, steps, units(o)+1, "every unit, the cluster's start among them, then done")

	b := rep.Redis.Cluster
	require.NotNil(t, b, "a cluster measured beside the server")
	assert.Empty(t, b.Skipped)
	assert.Contains(t, b.Server, "a loopback Redis Cluster of 3 nodes, redis-server ")
	assert.Contains(t, b.Server, "maxmemory 64 MiB a node, noeviction")
	assert.Len(t, b.Nodes, 3)
	require.Len(t, b.Cases, 1)
	c := b.Cases[0]
	assert.Equal(t, rep.Redis.Cases[0].Rows, c.Rows)
	assert.Zero(t, c.NotReady)
	for _, sp := range []spread{c.PutMBs, c.GetMBs, c.PutRatio, c.GetRatio} {
		assert.Equal(t, o.Reps, sp.N, "one figure a repetition")
		assert.Positive(t, sp.Median)
	}
	assert.Positive(t, c.Parts)
	assert.Positive(t, c.PartsSplit, "16 rows in parts of 4 over three nodes: some parts split")
	var out bytes.Buffer
	WriteTable(&out, rep)
	for _, want := range []string{"\n   Cluster beside: kvshare over a loopback Redis Cluster of 3 nodes", "cluster / one node is the per-node grouping's cost",
		"one node put", "put cluster/one node", "\n   4 KiB "} {
		assert.Contains(t, out.String(), want)
	}
}

// Measurement 7 over a cluster a store file names: the floor and the
// plain loop send each key to its node, every row Ready, nothing left on
// any node.
func TestRedisMeasurementOverACluster(t *testing.T) {
	path, cl := redisconfig.ClusterForTest(t, redistest.ClusterOptions{})
	o := tiny()
	o.Only = []Measurement{Redis}
	o.Redis.StorePath = path
	o.Redis.RowSizes = []int64{4096}
	rep, err := Run(t.Context(), o, nil, nil)
	require.NoError(t, err)
	d := rep.Redis
	require.NotNil(t, d)
	assert.Equal(t, "the Redis Cluster of "+path+" (seeds "+strings.Join(cl.Addrs(), ", ")+")", d.Server)
	assert.ElementsMatch(t, cl.Addrs(), d.Nodes)
	assert.Nil(t, d.Cluster, "nothing beside a store file")
	require.Len(t, d.Cases, 1)
	c := d.Cases[0]
	assert.Zero(t, c.KvshareNotReady)
	assert.Zero(t, c.FloorNotReady)
	assert.Zero(t, c.PlainNotReady)
	assert.Positive(t, c.PartsSplit)
	require.Len(t, rep.Goals, 2)
	assert.Equal(t, "4 KiB rows over a Redis Cluster: put MB/s / the same commands pipelined a node", rep.Goals[0].Name)
	var out bytes.Buffer
	WriteTable(&out, rep)
	assert.Contains(t, out.String(), "   A cluster of 3 nodes (")
	assert.Contains(t, out.String(), "parts split")

	for i := range cl.Nodes() {
		n, err := cl.Client(i)
		require.NoError(t, err)
		keys, err := n.Do(t.Context(), n.B().Dbsize().Build()).AsInt64()
		n.Close()
		require.NoError(t, err)
		assert.Zero(t, keys, "node %d: every side's keys are deleted after each round", i)
	}
}

// A binary with no redis-cli beside it makes no cluster: the one server
// is measured, and the cluster beside says why it was skipped.
func TestRedisClusterBesideWithoutACLI(t *testing.T) {
	binary := redistest.Require(t)
	lone := filepath.Join(t.TempDir(), "redis-server")
	require.NoError(t, os.Symlink(binary, lone))
	o := tiny()
	o.Reps = 1
	o.Only = []Measurement{Redis}
	o.Redis.Server = lone
	o.Redis.RowSizes = []int64{4096}
	rep, err := Run(t.Context(), o, nil, nil)
	require.NoError(t, err)
	require.NotNil(t, rep.Redis.Cluster)
	assert.Contains(t, rep.Redis.Cluster.Skipped, "skipped: starting a Redis Cluster from "+lone)
	assert.Contains(t, rep.Redis.Cluster.Skipped, "no redis-cli")
	require.Len(t, rep.Redis.Cases, 1)
	var out bytes.Buffer
	WriteTable(&out, rep)
	assert.Contains(t, out.String(), "\n   Cluster beside: skipped: starting a Redis Cluster from "+lone)
}

// Each part is split into one pipeline a node, in node order, each
// row with its slot.
func TestRedisPartsAreSplitByNode(t *testing.T) {
	m, err := slotmap.Of([]slotmap.Range{{Lo: 0, Hi: 5460, Addr: "a:1"}, {Lo: 5461, Hi: 10922, Addr: "b:2"}, {Lo: 10923, Hi: 16383, Addr: "c:3"}})
	require.NoError(t, err)
	nodes := &redisNodes{clients: make([]rueidis.Client, 3), addrs: m.Addrs, slots: &m}
	keys := make([]string, 12)
	slots := make([][]byte, 12)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
		slots[i] = make([]byte, 100+i)
	}
	parts := nodes.split(redisParts(keys, slots, 100, 12, 6, 1<<20))
	require.Len(t, parts, 2, "two parts of 6 rows")
	rows := 0
	for _, part := range parts {
		last := -1
		for _, p := range part {
			assert.Greater(t, p.node, last, "in node order, one pipeline a node")
			last = p.node
			var bytes int64
			for j, k := range p.keys {
				assert.Equal(t, p.node, m.Node(k), k)
				bytes += int64(len(p.slots[j]))
			}
			assert.Equal(t, bytes, p.bytes)
			rows += len(p.keys)
		}
	}
	assert.Equal(t, 12, rows)

	one := &redisNodes{clients: make([]rueidis.Client, 1)}
	whole := one.split(redisParts(keys, slots, 100, 12, 6, 1<<20))
	assert.Len(t, whole, 2)
	assert.Len(t, whole[0], 1, "one server: the part whole")
	assert.Equal(t, 0, one.of("any"))
}

func TestRedisMeasurementWithoutAServerSaysSo(t *testing.T) {
	o := tiny()
	o.Only = []Measurement{Redis}
	rep, err := Run(t.Context(), o, nil, nil)
	require.NoError(t, err)
	require.NotNil(t, rep.Redis)
	assert.Equal(t, skippedRedis, rep.Redis.Skipped)
	assert.Empty(t, rep.Goals)
	var out bytes.Buffer
	WriteTable(&out, rep)
	assert.Contains(t, out.String(), "\n7. Redis: "+skippedRedis+"\n")
}

// A server too small for a round: puts are Declined (OOM), counted apart,
// and move no bytes.
func TestRedisMeasurementCountsOnlyReadyRows(t *testing.T) {
	path, _ := redisconfig.ForTest(t, redistest.Options{MaxMemory: 4 << 20})
	o := tiny()
	o.Reps = 1
	o.Only = []Measurement{Redis}
	o.Redis.StorePath = path
	o.Redis.RowSizes = []int64{1 << 20}
	o.Redis.Bytes = 8 << 20
	rep, err := Run(t.Context(), o, nil, nil)
	require.NoError(t, err)
	c := rep.Redis.Cases[0]
	assert.Positive(t, c.KvshareNotReady, "some puts declined, their gets missed")
	assert.Positive(t, c.FloorNotReady)
	assert.Positive(t, c.PlainNotReady)
}
