package redistest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClusterOptionsDefaults(t *testing.T) {
	o, err := ClusterOptions{}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, DefaultClusterNodes, o.Nodes)
	assert.Equal(t, DefaultNodeTimeout, o.NodeTimeout)
	assert.Equal(t, "noeviction", o.Policy)
	assert.Equal(t, DefaultStartTimeout, o.StartTimeout)
	assert.Equal(t, DefaultStopTimeout, o.StopTimeout)
	assert.NotNil(t, o.Logger)
	assert.Equal(t, DefaultStartTimeout+2*DefaultNodeTimeout, o.settleBound())
}

func TestClusterOptionsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    ClusterOptions
		text string
	}{
		{"two nodes", ClusterOptions{Nodes: 2}, "Nodes 2"},
		{"negative nodes", ClusterOptions{Nodes: -1}, "Nodes -1"},
		{"too many nodes", ClusterOptions{Nodes: MaxClusterNodes + 1}, "Nodes 17"},
		{"negative node timeout", ClusterOptions{NodeTimeout: -time.Second}, "NodeTimeout"},
		{"sub-millisecond node timeout", ClusterOptions{NodeTimeout: time.Microsecond}, "NodeTimeout"},
		{"negative maxmemory", ClusterOptions{MaxMemory: -1}, "MaxMemory -1"},
		{"negative start timeout", ClusterOptions{StartTimeout: -time.Second}, "StartTimeout"},
		{"unknown policy", ClusterOptions{Policy: "lru"}, `Policy "lru"`},
		{"bad directive", ClusterOptions{Extra: [][2]string{{"HZ", "1"}}}, `name "HZ"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.o.withDefaults()
			require.ErrorIs(t, err, ErrOptions)
			assert.Contains(t, err.Error(), tc.text)
			// StartCluster refuses them before looking at the binary.
			_, err = StartCluster(t.Context(), "/nonexistent/redis-server", tc.o)
			require.ErrorIs(t, err, ErrOptions)
		})
	}
}

func TestStartClusterChecksBinary(t *testing.T) {
	_, err := StartCluster(t.Context(), "redis-server", ClusterOptions{})
	require.ErrorIs(t, err, ErrNotAbsolute)
	_, err = StartCluster(t.Context(), "/nonexistent/redis-server", ClusterOptions{})
	require.ErrorIs(t, err, ErrNoBinary)
}

func TestNodeOptions(t *testing.T) {
	o, err := ClusterOptions{NodeTimeout: 1500 * time.Millisecond, MaxMemory: 1 << 20, Extra: [][2]string{{"hz", "100"}}}.withDefaults()
	require.NoError(t, err)
	node := o.nodeOptions(2, 21001, 0, "/tmp/c/node-2")
	assert.Equal(t, 21001, node.Port)
	assert.Equal(t, "/tmp/c/node-2", node.Dir)
	assert.Equal(t, int64(1<<20), node.MaxMemory)
	for _, d := range [][2]string{
		{"cluster-enabled", "yes"},
		{"cluster-config-file", "nodes.conf"},
		{"cluster-node-timeout", "1500"},
		{"cluster-require-full-coverage", "no"},
		{"cluster-allow-reads-when-down", "no"},
		{"cluster-announce-ip", "127.0.0.1"},
	} {
		assert.Contains(t, node.Extra, d)
	}
	assert.Equal(t, [2]string{"hz", "100"}, node.Extra[len(node.Extra)-1], "Extra comes last, so it wins")
	assert.False(t, slices.ContainsFunc(node.Extra, func(d [2]string) bool { return strings.HasPrefix(d[0], "cluster-announce-port") }))
	_, err = node.withDefaults()
	require.NoError(t, err, "a valid Server's options")

	proxied := o.nodeOptions(0, 21001, 23456, "/tmp/c/node-0")
	assert.Contains(t, proxied.Extra, [2]string{"cluster-announce-port", "23456"})
	assert.Contains(t, proxied.Extra, [2]string{"cluster-announce-bus-port", "31001"})
	assert.Equal(t, "/tmp/c/node-0", nodeDir("/tmp/c", 0))
}
