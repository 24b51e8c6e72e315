package doctor

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/redisdrv/slotmap"
	"github.com/kvshare/kvshare/tools/internal/redisconfig"
)

// clusterVerdicts is every cluster check's verdict, as Report.Find
// finds it.
func clusterVerdicts(t *testing.T, rep Report) map[string]Verdict {
	t.Helper()
	v := map[string]Verdict{}
	for _, c := range redisClusterChecks {
		f, found := rep.Find(c)
		require.True(t, found, "%s is in the report", c)
		v[c] = f.Verdict
	}
	return v
}

// No seed answers: the slot map fails naming every seed, and the rest
// share one line.
func TestClusterSeedsThatDoNotAnswer(t *testing.T) {
	a, b := closedPort(t), closedPort(t)
	path := storeFile(t, redisconfig.ClusterText([]string{a, b}, "kvshare", 0, ""))
	rep := Run(t.Context(), Options{ConfigPath: path, LookupEnv: noEnv})
	assert.True(t, rep.Failed())
	v := clusterVerdicts(t, rep)
	assert.Equal(t, OK, v[CheckConfig])
	assert.Equal(t, OK, v[CheckPassword])
	assert.Equal(t, Fail, v[CheckSlotMap])
	for _, c := range redisClusterChecks[4:] {
		assert.Equal(t, Skip, v[c], c)
	}
	f, _ := rep.Find(CheckConfig)
	assert.Contains(t, f.Detail, "a Redis Cluster, seeds "+a+", "+b+", over plain TCP")
	assert.Contains(t, f.Detail, "expects any maxmemory and any maxmemory-policy of every node")
	f, _ = rep.Find(CheckSlotMap)
	assert.Contains(t, f.Detail, "no seed answered CLUSTER SLOTS ("+path+": [redis] addresses):\n")
	for _, seed := range []string{a, b} {
		assert.Contains(t, f.Detail, seed+": connecting: ")
	}
	assert.Contains(t, f.Detail, "connection refused (is redis-server running there")
	last := rep.Findings[len(rep.Findings)-1]
	assert.Equal(t, CheckRest, last.Check)
	assert.Contains(t, last.Detail, "the 11 other checks (nodes, cluster state, version, ")
	assert.Contains(t, last.Detail, "not run: no seed answered")
	var out bytes.Buffer
	rep.Write(&out)
	assert.Contains(t, out.String(), "doctor: 1 of 15 checks FAILED for "+path)
}

func TestSlotMapJudgement(t *testing.T) {
	whole, err := slotmap.Of([]slotmap.Range{{Lo: 0, Hi: 8191, Addr: "a:1"}, {Lo: 8192, Hi: 16383, Addr: "b:2"}})
	require.NoError(t, err)
	f := judgeSlotMap(whole, "a:1", nil)
	assert.Equal(t, OK, f.Verdict)
	assert.Equal(t, "CLUSTER SLOTS from a:1: all 16384 slots served, by 2 nodes", f.Detail)

	f = judgeSlotMap(whole, "b:2", []string{"c:3: connecting: refused"})
	assert.Equal(t, Warn, f.Verdict, "a seed that did not answer")
	assert.Contains(t, f.Detail, "the seed addresses asked before it did not answer:\nc:3: connecting: refused")

	holed, err := slotmap.Of([]slotmap.Range{{Lo: 0, Hi: 5460, Addr: "a:1"}, {Lo: 10923, Hi: 16382, Addr: "c:3"}})
	require.NoError(t, err)
	f = judgeSlotMap(holed, "a:1", nil)
	assert.Equal(t, Fail, f.Verdict)
	assert.Equal(t, "CLUSTER SLOTS from a:1: 10921 of 16384 slots served, by 2 nodes; no node serves slots 5461-10922, the first of 2 ranges: "+
		"a row whose key hashes there ends Fault (assign them, for example with redis-cli --cluster fix)", f.Detail)
}

func TestClusterInfoJudgement(t *testing.T) {
	for _, c := range []struct {
		info    string
		verdict Verdict
		want    string
	}{
		{"cluster_state:ok\r\ncluster_slots_assigned:16384\r\ncluster_slots_pfail:0\r\ncluster_slots_fail:0\r\ncluster_known_nodes:3\r\n", OK,
			"cluster_state:ok (16384 slots assigned, 3 known nodes)"},
		{"cluster_state:ok\r\ncluster_slots_assigned:16384\r\ncluster_slots_fail:5461\r\ncluster_known_nodes:3\r\n", Warn,
			"but 0 slots flagged failing (fail?) and 5461 failed: a node does not answer the others"},
		{"cluster_state:fail\r\ncluster_slots_assigned:10923\r\ncluster_known_nodes:3\r\n", Fail,
			"cluster_state:fail, not ok (10923 slots assigned, 3 known nodes): the node refuses commands (CLUSTERDOWN)"},
		{"", Fail, "cluster_state:?, not ok (? slots assigned, ? known nodes)"},
	} {
		f := judgeClusterInfo(infoFields(c.info))
		assert.Equal(t, CheckClusterState, f.Check)
		assert.Equal(t, c.verdict, f.Verdict, f.Detail)
		assert.Contains(t, f.Detail, c.want)
	}
}

// Nodes that saw the same share a line; a failure comes first and names
// its node.
func TestMergedNamesTheNodes(t *testing.T) {
	same := []nodeAnswer[Finding]{
		{addr: "a:1", v: ok(CheckMaxMemory, "2 GiB")},
		{addr: "b:2", v: ok(CheckMaxMemory, "2 GiB")},
	}
	f := merged(CheckMaxMemory, same)
	assert.Equal(t, Finding{Check: CheckMaxMemory, Verdict: OK, Detail: "every node asked (a:1, b:2): 2 GiB"}, f)

	mixed := append(same, nodeAnswer[Finding]{addr: "c:3", v: fail(CheckMaxMemory, "the server has maxmemory 1 GiB")},
		nodeAnswer[Finding]{addr: "d:4", v: warn(CheckMaxMemory, "0")})
	f = merged(CheckMaxMemory, mixed)
	assert.Equal(t, Fail, f.Verdict)
	assert.Equal(t, "c:3: the server has maxmemory 1 GiB\nd:4: 0\na:1, b:2: 2 GiB", f.Detail)

	one := merged(CheckVersion, []nodeAnswer[Finding]{{addr: "a:1", v: skip(CheckVersion, "INFO refused")}})
	assert.Equal(t, Finding{Check: CheckVersion, Verdict: Skip, Detail: "a:1: INFO refused"}, one)
}
