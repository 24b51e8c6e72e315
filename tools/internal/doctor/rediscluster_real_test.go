package doctor

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/patience"
	"github.com/kvshare/kvshare/redisdrv/redistest"
	"github.com/kvshare/kvshare/tools/internal/redisconfig"
)

// On a loopback cluster whose limits the file expects, every check
// passes, each node is listed and the probe leaves nothing behind; once a
// node is killed and another's maxmemory lowered, the nodes check fails
// naming the one, the maxmemory check the other, and the probe does not
// run.
func TestRedisClusterChecksEveryNode(t *testing.T) {
	path, c := redisconfig.ClusterForTest(t, redistest.ClusterOptions{})
	rep := Run(t.Context(), Options{ConfigPath: path, Wait: patience.Wait()})
	for _, f := range rep.Findings {
		t.Logf("%-13s %-4s %s", f.Check, f.Verdict, f.Detail)
	}
	assert.False(t, rep.Failed())
	require.Len(t, rep.Findings, len(redisClusterChecks))
	for i, f := range rep.Findings {
		assert.Equal(t, redisClusterChecks[i], f.Check, "in order")
		assert.Equal(t, OK, f.Verdict, "%s: %s", f.Check, f.Detail)
	}
	f, _ := rep.Find(CheckSlotMap)
	assert.Contains(t, f.Detail, "all 16384 slots served, by 3 nodes")
	f, _ = rep.Find(CheckNodes)
	for _, addr := range c.Addrs() {
		assert.Contains(t, f.Detail, "\n"+addr+" (slots ")
	}
	f, _ = rep.Find(CheckClusterState)
	assert.Contains(t, f.Detail, "every node asked (")
	assert.Contains(t, f.Detail, "): cluster_state:ok (16384 slots assigned, 3 known nodes)")
	f, _ = rep.Find(CheckVersion)
	assert.Contains(t, f.Detail, "Redis "+c.Node(0).Version()+" (cluster")
	f, _ = rep.Find(CheckMaxMemory)
	assert.Contains(t, f.Detail, "2 GiB (2147483648 bytes), at least the 2 GiB [redis] maxmemory expects")
	for i := range c.Nodes() {
		cl, err := c.Client(i)
		require.NoError(t, err)
		n, err := cl.Do(t.Context(), cl.B().Dbsize().Build()).AsInt64()
		cl.Close()
		require.NoError(t, err)
		assert.Zero(t, n, "node %d: the probe's key is removed", i)
	}

	cl, err := c.Client(0)
	require.NoError(t, err)
	require.NoError(t, cl.Do(t.Context(), cl.B().ConfigSet().ParameterValue().ParameterValue("maxmemory", "64mb").Build()).Error())
	cl.Close()
	require.NoError(t, c.Kill(2))
	rep = Run(t.Context(), Options{ConfigPath: path, Wait: patience.Wait()})
	for _, f := range rep.Findings {
		t.Logf("%-13s %-4s %s", f.Check, f.Verdict, f.Detail)
	}
	assert.True(t, rep.Failed())
	v := clusterVerdicts(t, rep)
	assert.Equal(t, Fail, v[CheckNodes])
	assert.Equal(t, OK, v[CheckSlotMap], "the others still name node 2 the owner of its slots")
	assert.Equal(t, OK, v[CheckVersion], "judged on the nodes that answered")
	for _, check := range []string{CheckPut, CheckLookup, CheckGet, CheckRemove, CheckClose} {
		assert.Equal(t, Skip, v[check], check)
	}
	f, _ = rep.Find(CheckNodes)
	assert.Contains(t, f.Detail, "1 of 3 nodes did not answer:")
	assert.Contains(t, f.Detail, c.Addr(2)+" (slots 10923-16383): connecting: ")
	assert.Contains(t, f.Detail, "connection refused")
	f, _ = rep.Find(CheckVersion)
	assert.Contains(t, f.Detail, "\n"+c.Addr(2)+": not asked: it did not answer PING")
	f, _ = rep.Find(CheckMaxMemory)
	assert.Equal(t, Fail, f.Verdict)
	assert.True(t, strings.HasPrefix(f.Detail, c.Addr(0)+": the server has maxmemory 64 MiB (67108864 bytes); "+path+": [redis] maxmemory expects at least 2 GiB"), f.Detail)
	assert.Contains(t, f.Detail, "\n"+c.Addr(1)+": 2 GiB")
}

// A standalone server given as a cluster's seed fails the slot map,
// saying what to change.
func TestRedisClusterFileOfAStandaloneServer(t *testing.T) {
	s := redistest.StartForTest(t, redistest.Options{})
	path := storeFile(t, redisconfig.ClusterText([]string{s.Addr()}, "kvshare", 0, ""))
	rep := Run(t.Context(), Options{ConfigPath: path, Wait: patience.Wait()})
	f, _ := rep.Find(CheckSlotMap)
	assert.Equal(t, Fail, f.Verdict)
	assert.Contains(t, f.Detail, s.Addr()+": CLUSTER SLOTS: ")
	assert.Contains(t, f.Detail, "cluster support disabled")
	assert.Contains(t, f.Detail, "for one server set [redis] cluster = false and address")
}
