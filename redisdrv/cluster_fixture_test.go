package redisdrv

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/patience"
	"github.com/kvshare/kvshare/redisdrv/redistest"
)

// cluster is a test's Redis Cluster of three nodes (skipping the test
// when the tier is off), each node behind a proxy it announces, so that
// a client following the cluster talks to the nodes through the proxies
// alone; nodes holds a raw client straight to each node.
type cluster struct {
	*redistest.Cluster
	nodes  []*server
	owners []int // each slot's node, as read by refresh
}

func startCluster(t *testing.T, o redistest.ClusterOptions) *cluster {
	t.Helper()
	o.Proxied = true
	c := &cluster{Cluster: redistest.ClusterForTest(t, o)}
	for i := range c.Nodes() {
		raw, err := c.Client(i)
		require.NoError(t, err)
		t.Cleanup(raw.Close)
		c.nodes = append(c.nodes, &server{Server: c.Node(i), raw: raw})
	}
	c.refresh(t)
	return c
}

// refresh reads the slot map again (after a move), within a deadline
// (see server.do).
func (c *cluster) refresh(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience.Wait())
	defer cancel()
	owners, err := c.SlotMap(ctx)
	require.NoError(t, err)
	c.owners = owners
}

// node is the raw server holding key.
func (c *cluster) node(key string) *server { return c.nodes[c.owners[redistest.Slot(key)]] }

func (c *cluster) seed(t testing.TB, key string, data []byte) { c.node(key).seed(t, key, data) }

func (c *cluster) object(t testing.TB, key string) ([]byte, bool) { return c.node(key).object(t, key) }

func (c *cluster) setMaxMemory(t testing.TB, bytes int64, policy string) {
	for _, s := range c.nodes {
		s.setMaxMemory(t, bytes, policy)
	}
}

// proxies is every node's proxy.
func (c *cluster) proxies() []*redistest.Proxy {
	ps := make([]*redistest.Proxy, len(c.nodes))
	for i := range ps {
		ps[i] = c.Proxy(i)
	}
	return ps
}

// clusterDriver returns a driver over the cluster seeded with seeds,
// built from a store config as Open builds it, closed at the end of the
// test unless the test closed it.
func clusterDriver(t *testing.T, seeds []string, cfg Config) *Driver {
	t.Helper()
	full, err := cfg.withDefaults()
	require.NoError(t, err)
	sc := StoreConfig{File: "test", Redis: RedisConfig{Cluster: true, Addresses: seeds, DialTimeout: patience.Scaled(5 * time.Second),
		Workers: full.Workers, RowsPerCall: full.RowsPerCall, BytesPerCall: full.BytesPerCall, CallTimeout: cfg.CallTimeout}}
	require.NoError(t, sc.Validate())
	opt, err := sc.ClientOption()
	require.NoError(t, err)
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	d, err := NewCluster(ctx, opt, cfg)
	require.NoError(t, err)
	return d
}
