package slotmap

import (
	"crypto/tls"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/redisdrv/internal/keyslot"
	"github.com/kvshare/kvshare/redisdrv/redistest"
)

func TestAWholeMap(t *testing.T) {
	m, err := Of([]Range{{10923, 16383, "c:3"}, {0, 5460, "a:1"}, {5461, 10922, "b:2"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"c:3", "a:1", "b:2"}, m.Addrs, "in the order of their first range given")
	assert.Equal(t, []Range{{0, 5460, "a:1"}, {5461, 10922, "b:2"}, {10923, 16383, "c:3"}}, m.Ranges, "by first slot")
	assert.Empty(t, m.Gaps())
	assert.Equal(t, Slots, m.Covered())
	assert.Equal(t, "5461-10922", m.SlotsText("b:2"))
	assert.Equal(t, "no slots", m.SlotsText("d:4"))
	for _, key := range []string{"a", "kvshare/bench/x", "{tag}y"} {
		n := m.Node(key)
		require.GreaterOrEqual(t, n, 0, key)
		s := keyslot.Of(key)
		rs := m.RangesOf(m.Addrs[n])
		require.Len(t, rs, 1)
		assert.True(t, rs[0].Lo <= s && s <= rs[0].Hi, "%s: slot %d on %s", key, s, m.Addrs[n])
	}
}

func TestGapsAreNamed(t *testing.T) {
	m, err := Of([]Range{{0, 99, "a:1"}, {200, 200, "a:1"}, {300, 16382, "b:2"}})
	require.NoError(t, err)
	assert.Equal(t, []Range{{100, 199, ""}, {201, 299, ""}, {16383, 16383, ""}}, m.Gaps())
	assert.Equal(t, Slots-100-99-1, m.Covered())
	assert.Equal(t, "0-99, 200", m.SlotsText("a:1"))
	assert.Equal(t, "16383", m.Gaps()[2].String())

	empty, err := Of(nil)
	require.NoError(t, err)
	assert.Equal(t, []Range{{0, Slots - 1, ""}}, empty.Gaps())
	assert.Equal(t, -1, empty.Node("a"))
}

func TestBadRangesAreRefused(t *testing.T) {
	for _, r := range []Range{{-1, 3, "a:1"}, {5, 4, "a:1"}, {0, Slots, "a:1"}} {
		_, err := Of([]Range{r})
		require.Error(t, err, "%v", r)
		assert.Contains(t, err.Error(), "of a:1 is not within 0-16383")
	}
}

func TestAddresses(t *testing.T) {
	got, err := address("", 7001, "10.0.0.5:7000")
	require.NoError(t, err)
	assert.Equal(t, "10.0.0.5:7001", got, "a node without a host is at the asked node's")
	got, err = address("::1", 7001, "x")
	require.NoError(t, err)
	assert.Equal(t, "[::1]:7001", got)
	_, err = address("h", 0, "x:1")
	assert.ErrorContains(t, err, "port 0 is not a TCP port")
	_, err = address("?", 1, "nohost")
	assert.ErrorContains(t, err, `asked at "nohost"`)
}

// A cluster's own answer: three nodes, every slot served, each node
// where redistest says it is.
func TestReadAClustersMap(t *testing.T) {
	c := redistest.ClusterForTest(t, redistest.ClusterOptions{})
	client, err := c.Client(1)
	require.NoError(t, err)
	defer client.Close()
	m, err := Read(t.Context(), client, c.Addr(1))
	require.NoError(t, err)
	assert.ElementsMatch(t, c.Addrs(), m.Addrs)
	assert.Empty(t, m.Gaps())
	owners, err := c.SlotMap(t.Context())
	require.NoError(t, err)
	for _, key := range []string{"a", "b", "kvshare/soak/1"} {
		assert.Equal(t, c.Addr(owners[keyslot.Of(key)]), m.Addrs[m.Node(key)], key)
	}
}

func TestNodeOption(t *testing.T) {
	opt := rueidis.ClientOption{InitAddress: []string{"a:1", "b:2"}, TLSConfig: &tls.Config{}, Username: "kv"}
	got := NodeOption(opt, "redis-2.internal:6380")
	assert.Equal(t, []string{"redis-2.internal:6380"}, got.InitAddress)
	assert.True(t, got.ForceSingleClient)
	assert.Equal(t, "kv", got.Username)
	assert.Equal(t, "redis-2.internal", got.TLSConfig.ServerName, "each node verified under its own host")
	assert.Empty(t, opt.TLSConfig.ServerName, "the file's option is left as it was")
	assert.Equal(t, []string{"a:1", "b:2"}, opt.InitAddress)

	opt.TLSConfig.ServerName = "redis.internal"
	assert.Equal(t, "redis.internal", NodeOption(opt, "x:1").TLSConfig.ServerName, "a name the file gives is kept")
	assert.Nil(t, NodeOption(rueidis.ClientOption{}, "x:1").TLSConfig)
}
