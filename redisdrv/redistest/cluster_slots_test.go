package redistest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseNodes(t *testing.T) {
	text := "e4d5 127.0.0.1:21001@31001 myself,master - 0 1796138236000 1 connected 0-5460 [93->-03de]\n" +
		"03de 127.0.0.1:21002@31002,host.example master - 0 1796138235996 2 connected 5461-10922 [93-<-e4d5]\r\n" +
		"ccb8 127.0.0.1:21003@31003 master,fail - 1796138236000 1796138235000 3 disconnected 10923-16382 16383\n"
	lines, err := parseNodes(text)
	require.NoError(t, err)
	require.Len(t, lines, 3)
	assert.Equal(t, nodeLine{id: "e4d5", addr: "127.0.0.1:21001", busPort: 31001, flags: []string{"myself", "master"},
		connected: true, slots: [][2]int{{0, 5460}}, migrating: map[int]string{93: "03de"}}, lines[0])
	assert.Equal(t, nodeLine{id: "03de", addr: "127.0.0.1:21002", busPort: 31002, flags: []string{"master"},
		connected: true, slots: [][2]int{{5461, 10922}}, importing: map[int]string{93: "e4d5"}}, lines[1])
	assert.Equal(t, [][2]int{{10923, 16382}, {16383, 16383}}, lines[2].slots)
	assert.True(t, lines[2].has("fail"))
	assert.False(t, lines[2].has("fail?"))
	assert.False(t, lines[2].connected)

	c := &Cluster{ids: []string{"e4d5", "03de", "ccb8"}}
	owners, err := c.owners(lines)
	require.NoError(t, err)
	assert.Equal(t, 0, owners[93], "a migrating slot is its source's until Finish")
	assert.Equal(t, 1, owners[5461])
	assert.Equal(t, 2, owners[16383])
	_, err = (&Cluster{ids: []string{"e4d5"}}).owners(lines)
	require.ErrorIs(t, err, ErrCluster, "slots owned by a stranger")

	for _, bad := range []string{
		"e4d5 127.0.0.1:21001@31001 master - 0 0 1",
		"e4d5 127.0.0.1:21001 master - 0 0 1 connected",
		"e4d5 127.0.0.1:21001@31001 master - 0 0 1 connected 16384",
		"e4d5 127.0.0.1:21001@31001 master - 0 0 1 connected 9-3",
		"e4d5 127.0.0.1:21001@31001 master - 0 0 1 connected [9-x-y]",
		"e4d5 127.0.0.1:21001@31001 master - 0 0 1 connected [9->-y",
	} {
		_, err := parseNodes(bad)
		require.ErrorIs(t, err, ErrCluster, "%q", bad)
	}
}

func TestParseInfo(t *testing.T) {
	info := parseInfo("cluster_state:ok\r\ncluster_slots_assigned:16384\r\ncluster_known_nodes:3\r\n")
	assert.Equal(t, map[string]string{"cluster_state": "ok", "cluster_slots_assigned": "16384", "cluster_known_nodes": "3"}, info)
}
