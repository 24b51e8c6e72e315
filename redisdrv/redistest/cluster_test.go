package redistest

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clusterClient is a rueidis cluster client seeded with c.Addrs(),
// closed with the test.
func clusterClient(t testing.TB, c *Cluster) rueidis.Client {
	t.Helper()
	cl, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: c.Addrs(), DisableCache: true})
	require.NoError(t, err, "a cluster client of %v", c.Addrs())
	t.Cleanup(cl.Close)
	return cl
}

// nodeClient is c.Client(i), closed with the test.
func nodeClient(t testing.TB, c *Cluster, i int) rueidis.Client {
	t.Helper()
	cl, err := c.Client(i)
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return cl
}

// redirect returns the address of the MOVED (or, with ask, ASK) error err
// is, failing t when it is another answer.
func redirect(t testing.TB, err error, ask bool) string {
	t.Helper()
	re, ok := rueidis.IsRedisErr(err)
	require.True(t, ok, "a Redis error reply, not %v", err)
	addr, ok := re.IsMoved()
	if ask {
		addr, ok = re.IsAsk()
	}
	require.True(t, ok, "a redirect (ask %v), not %q", ask, re.Error())
	return addr
}

// getOn sends GET key straight to node i: its value, or the error.
func getOn(t testing.TB, cl rueidis.Client, key string) (string, error) {
	t.Helper()
	return cl.Do(boundedCtx(t), cl.B().Get().Key(key).Build()).ToString()
}

// setAll sets every key to its own name through cl.
func setAll(t testing.TB, cl rueidis.Client, keys []string) {
	t.Helper()
	for _, k := range keys {
		require.NoError(t, cl.Do(boundedCtx(t), cl.B().Set().Key(k).Value(k).Build()).Error(), "SET %s", k)
	}
}

// clusterInfo is CLUSTER INFO on cl, parsed.
func clusterInfo(t testing.TB, cl rueidis.Client) map[string]string {
	t.Helper()
	text, err := cl.Do(boundedCtx(t), cl.B().ClusterInfo().Build()).ToString()
	require.NoError(t, err)
	return parseInfo(strings.TrimPrefix(text, "txt:"))
}

// other is a node index other than i.
func other(c *Cluster, i int) int { return (i + 1) % len(c.Nodes()) }

var nodeIDForm = regexp.MustCompile(`^[0-9a-f]{40}$`)

func TestCluster(t *testing.T) {
	c := ClusterForTest(t, ClusterOptions{})
	n := len(c.Nodes())
	require.Equal(t, DefaultClusterNodes, n)
	direct := make([]rueidis.Client, n)
	for i := range n {
		direct[i] = nodeClient(t, c, i)
	}
	cl := clusterClient(t, c)

	t.Run("slots are split across the nodes", func(t *testing.T) {
		owners, err := c.SlotMap(t.Context())
		require.NoError(t, err)
		require.Len(t, owners, NumSlots)
		assert.NotContains(t, owners, -1, "every slot has an owner")
		for i := range n {
			assert.Equal(t, c.Node(i).Addr(), c.Addr(i), "not proxied: the node's own address")
			assert.Nil(t, c.Proxy(i))
			assert.Regexp(t, nodeIDForm, c.NodeID(i))
			owned := 0
			for _, o := range owners {
				if o == i {
					owned++
				}
			}
			assert.InDelta(t, NumSlots/n, owned, 1, "node %d owns a third of the slots", i)
			info := clusterInfo(t, direct[i])
			assert.Equal(t, "ok", info["cluster_state"])
			assert.Equal(t, "16384", info["cluster_slots_assigned"])
			assert.Equal(t, "3", info["cluster_known_nodes"])
		}
		assert.Equal(t, n, len(slices.Compact(slices.Sorted(slices.Values(c.ids)))), "the IDs are distinct")
		assert.Equal(t, filepath.Join(c.Dir(), "node-1"), c.Node(1).Dir())
		assert.FileExists(t, filepath.Join(c.Node(1).Dir(), "nodes.conf"))
	})

	t.Run("Slot is CLUSTER KEYSLOT", func(t *testing.T) {
		keys := []string{"", "a", "foo", "123456789", "{user1000}.following", "{user1000}.followers",
			"foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}", "{", "}", "{}", "}{", "{a", "a}", "x{y}", "\x00\xff{\x80}"}
		for j := range 300 {
			keys = append(keys, fmt.Sprintf("key:%d", j), fmt.Sprintf("{tag%d}:row", j%17), string(rune(j))+"{"+strconv.Itoa(j*7919)+"}")
		}
		cmds := make(rueidis.Commands, len(keys))
		for j, k := range keys {
			cmds[j] = direct[0].B().ClusterKeyslot().Key(k).Build()
		}
		for j, r := range direct[0].DoMulti(boundedCtx(t), cmds...) {
			want, err := r.AsInt64()
			require.NoError(t, err)
			assert.Equal(t, int(want), Slot(keys[j]), "slot of %q", keys[j])
		}
	})

	t.Run("a cluster client lands keys on their owners, others answer MOVED", func(t *testing.T) {
		var keys []string
		for j := range 60 {
			keys = append(keys, fmt.Sprintf("spread:%d", j))
		}
		setAll(t, cl, keys)
		seen := map[int]bool{}
		for _, k := range keys {
			owner, err := c.Owner(t.Context(), Slot(k))
			require.NoError(t, err)
			seen[owner] = true
			v, err := getOn(t, direct[owner], k)
			require.NoError(t, err, "GET %s on its owner, node %d", k, owner)
			assert.Equal(t, k, v)
			_, err = getOn(t, direct[other(c, owner)], k)
			assert.Equal(t, fmt.Sprintf("MOVED %d %s", Slot(k), c.Addr(owner)), errText(err))
			assert.Equal(t, c.Addr(owner), redirect(t, err, false))
		}
		assert.Len(t, seen, n, "the keys fell on every node")
	})

	t.Run("KeysOn gives keys the node owns", func(t *testing.T) {
		for i := range n {
			keys, err := c.KeysOn(t.Context(), i, 20, "on:")
			require.NoError(t, err)
			require.Len(t, keys, 20)
			assert.Len(t, slices.Compact(slices.Sorted(slices.Values(keys))), 20, "distinct")
			for _, k := range keys {
				assert.Regexp(t, `^on:\d+$`, k)
				owner, err := c.Owner(t.Context(), Slot(k))
				require.NoError(t, err)
				assert.Equal(t, i, owner, "key %s", k)
			}
			setAll(t, direct[i], keys) // no MOVED
		}
		_, err := c.KeysOn(t.Context(), 0, -1, "x")
		require.ErrorIs(t, err, ErrOptions)
		_, err = c.Owner(t.Context(), NumSlots)
		require.ErrorIs(t, err, ErrOptions)
	})

	t.Run("a slot moves under traffic", func(t *testing.T) {
		moveUnderTraffic(t, c, direct, cl)
	})

	t.Run("a killed node's slots are lost, the others served, a restart rejoins it empty", func(t *testing.T) {
		killAndRestart(t, c, direct, cl)
	})

	t.Run("a frozen node", func(t *testing.T) {
		keys, err := c.KeysOn(t.Context(), 0, 1, "frozen:")
		require.NoError(t, err)
		setAll(t, cl, keys)
		require.NoError(t, c.Freeze(0))
		require.ErrorIs(t, c.Freeze(0), ErrState)
		require.ErrorIs(t, c.Settle(t.Context()), ErrState, "Settle refuses at once")
		owner, err := c.Owner(t.Context(), Slot(keys[0]))
		require.NoError(t, err, "a live node answers for the frozen one")
		assert.Equal(t, 0, owner)
		require.NoError(t, c.Resume(0))
		require.NoError(t, c.Settle(t.Context()))
		v, err := getOn(t, direct[0], keys[0])
		require.NoError(t, err)
		assert.Equal(t, keys[0], v, "a frozen node keeps its keys")
	})
}

// errText is err's text, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// moveUnderTraffic moves a slot of node 0 to node 1 step by step while a
// cluster client writes and reads the slot's keys, checking what the
// source and the target answer at each step.
func moveUnderTraffic(t *testing.T, c *Cluster, direct []rueidis.Client, cl rueidis.Client) {
	ctx := t.Context()
	tags, err := c.KeysOn(ctx, 0, 1, "tag")
	require.NoError(t, err)
	tag := tags[0]
	slot := Slot(tag)
	keys := make([]string, 30)
	for j := range keys {
		keys[j] = fmt.Sprintf("{%s}:%d", tag, j)
	}
	absent := "{" + tag + "}:absent"
	setAll(t, direct[0], keys)

	// Traffic: SET then GET of the slot's own keys, through the cluster
	// client, until stopped.
	stop := make(chan struct{})
	var ops atomic.Int64
	var trafficErr atomic.Pointer[error]
	fail := func(err error) { trafficErr.Store(&err) }
	var wg sync.WaitGroup
	wg.Go(func() {
		for j := 0; ; j++ {
			select {
			case <-stop:
				return
			default:
			}
			k, v := fmt.Sprintf("{%s}:traffic:%d", tag, j%20), strconv.Itoa(j)
			if err := cl.Do(ctx, cl.B().Set().Key(k).Value(v).Build()).Error(); err != nil {
				fail(fmt.Errorf("SET %s: %w", k, err))
				return
			}
			got, err := cl.Do(ctx, cl.B().Get().Key(k).Build()).ToString()
			if err != nil || got != v {
				fail(fmt.Errorf("GET %s = %q, %v; want %q", k, got, err, v))
				return
			}
			ops.Add(1)
		}
	})
	stopped := false
	stopTraffic := func() {
		if !stopped {
			stopped = true
			close(stop)
			wg.Wait()
		}
	}
	defer stopTraffic()
	trafficRuns := func(step string) {
		from := ops.Load()
		waitUntil(t, "traffic runs "+step, func() bool { return ops.Load() > from+3 || trafficErr.Load() != nil })
	}

	m, err := c.BeginMove(ctx, slot, 1)
	require.NoError(t, err)
	assert.Equal(t, slot, m.Slot())
	assert.Equal(t, 0, m.From())
	assert.Equal(t, 1, m.To())
	_, err = getOn(t, direct[0], absent)
	assert.Equal(t, c.Addr(1), redirect(t, err, true), "the source sends a missing key's reader to the target")
	v, err := getOn(t, direct[0], keys[0])
	require.NoError(t, err, "the source still serves the keys it holds")
	assert.Equal(t, keys[0], v)
	_, err = getOn(t, direct[1], keys[0])
	assert.Equal(t, c.Addr(0), redirect(t, err, false), "without ASKING the target sends readers back")
	trafficRuns("after BeginMove")

	moved, err := m.MigrateKeys(ctx, 7)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, moved, len(keys), "the seeded keys and the traffic's moved")
	_, err = getOn(t, direct[0], keys[0])
	assert.Equal(t, c.Addr(1), redirect(t, err, true), "a migrated key is asked for on the target")
	asked := direct[1].DoMulti(boundedCtx(t), direct[1].B().Asking().Build(), direct[1].B().Get().Key(keys[0]).Build())
	require.NoError(t, asked[0].Error())
	v, err = asked[1].ToString()
	require.NoError(t, err, "GET after ASKING on the target")
	assert.Equal(t, keys[0], v)
	trafficRuns("after MigrateKeys")

	require.NoError(t, m.Finish(ctx))
	trafficRuns("after Finish")
	stopTraffic()
	if p := trafficErr.Load(); p != nil {
		require.NoError(t, *p, "the traffic during the move")
	}

	owner, err := c.Owner(ctx, slot)
	require.NoError(t, err)
	assert.Equal(t, 1, owner)
	for i := range direct {
		lines, err := c.view(ctx, i)
		require.NoError(t, err)
		owners, err := c.owners(lines)
		require.NoError(t, err)
		assert.Equal(t, 1, owners[slot], "node %d's view", i)
	}
	_, err = getOn(t, direct[0], keys[0])
	assert.Equal(t, c.Addr(1), redirect(t, err, false), "the old owner answers MOVED to the new one")
	for _, k := range keys {
		v, err := getOn(t, direct[1], k)
		require.NoError(t, err, "GET %s on the new owner", k)
		assert.Equal(t, k, v)
		v, err = cl.Do(boundedCtx(t), cl.B().Get().Key(k).Build()).ToString()
		require.NoError(t, err, "GET %s through the cluster client", k)
		assert.Equal(t, k, v)
	}
	_, err = c.BeginMove(ctx, slot, 1)
	require.ErrorIs(t, err, ErrCluster, "a slot already on the target")

	// And back, in one call.
	moved, err = c.MoveSlot(ctx, slot, 0)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, moved, len(keys))
	v, err = getOn(t, direct[0], keys[1])
	require.NoError(t, err)
	assert.Equal(t, keys[1], v)
	require.NoError(t, c.Settle(ctx))
}

// killAndRestart kills the last node, checks the others serve their keys
// before and after they flag it failed, and restarts it.
func killAndRestart(t *testing.T, c *Cluster, direct []rueidis.Client, cl rueidis.Client) {
	ctx := t.Context()
	n := len(direct)
	dead := n - 1
	keys := make([][]string, n)
	for i := range n {
		var err error
		keys[i], err = c.KeysOn(ctx, i, 10, "kill:")
		require.NoError(t, err)
		setAll(t, cl, keys[i])
	}
	served := func(when string) {
		t.Helper()
		for i := range dead {
			for _, k := range keys[i] {
				v, err := cl.Do(boundedCtx(t), cl.B().Get().Key(k).Build()).ToString()
				require.NoError(t, err, "%s: GET %s (node %d) through the cluster client", when, k, i)
				assert.Equal(t, k, v)
				v, err = getOn(t, direct[i], k)
				require.NoError(t, err, "%s: GET %s on node %d", when, k, i)
				assert.Equal(t, k, v)
			}
			// The live nodes send readers of the dead node's keys to it.
			_, err := getOn(t, direct[i], keys[dead][0])
			assert.Equal(t, c.Addr(dead), redirect(t, err, false), "%s: node %d on a key of the dead node", when, i)
		}
	}

	pid := c.Node(dead).PID()
	require.NoError(t, c.Kill(dead))
	assert.True(t, gone(pid))
	served("just after Kill")
	_, err := net.Dial("tcp", c.Addr(dead))
	require.Error(t, err, "a dial to the killed node is refused")
	// rueidis retries a read whose connection fails until its context
	// ends; without retries the error shows at once.
	once, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: c.Addrs()[:dead], DisableCache: true, DisableRetry: true})
	require.NoError(t, err)
	defer once.Close()
	err = once.Do(boundedCtx(t), once.B().Get().Key(keys[dead][0]).Build()).Error()
	require.Error(t, err, "a key of the dead node")
	_, isRedis := rueidis.IsRedisErr(err)
	assert.False(t, isRedis, "a connection error, not a Redis reply: %v", err)

	require.NoError(t, c.WaitFailed(ctx, dead))
	served("once flagged failed")
	for i := range dead {
		assert.Equal(t, "ok", clusterInfo(t, direct[i])["cluster_state"], "node %d keeps the cluster ok (most masters live)", i)
	}
	require.ErrorIs(t, c.Settle(ctx), ErrNotRunning, "Settle refuses at once")

	require.NoError(t, c.Restart(ctx, dead))
	assert.NotEqual(t, pid, c.Node(dead).PID())
	served("after Restart")
	for _, k := range keys[dead] {
		err := cl.Do(boundedCtx(t), cl.B().Get().Key(k).Build()).Error()
		assert.True(t, rueidis.IsRedisNil(err), "the restarted node is empty: GET %s: %v", k, err)
	}
	setAll(t, cl, keys[dead])
	v, err := getOn(t, direct[dead], keys[dead][0])
	require.NoError(t, err, "the restarted node serves its slots again")
	assert.Equal(t, keys[dead][0], v)
	owners, err := c.SlotMap(ctx)
	require.NoError(t, err)
	assert.Contains(t, owners, dead)
}

func TestClusterProxied(t *testing.T) {
	binary := Require(t)
	ctx := t.Context()
	c, err := StartCluster(ctx, binary, ClusterOptions{Proxied: true, Logger: testLogger(t)})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, c.Stop()) })
	n := len(c.Nodes())
	for i := range n {
		require.NotNil(t, c.Proxy(i))
		assert.Equal(t, c.Proxy(i).Addr(), c.Addr(i))
		assert.Equal(t, c.Node(i).Addr(), c.Proxy(i).Target())
		assert.NotEqual(t, c.Node(i).Addr(), c.Addr(i))
	}
	assert.Equal(t, []string{c.Proxy(0).Addr(), c.Proxy(1).Addr(), c.Proxy(2).Addr()}, c.Addrs())
	direct := make([]rueidis.Client, n)
	for i := range n {
		direct[i] = nodeClient(t, c, i)
		text, err := direct[i].Do(boundedCtx(t), direct[i].B().ClusterNodes().Build()).ToString()
		require.NoError(t, err)
		for k := range n {
			assert.Contains(t, text, fmt.Sprintf(" %s@%d ", c.Addr(k), c.Node(k).Port()+BusPortOffset), "node %d's CLUSTER NODES", i)
			assert.NotContains(t, text, c.Node(k).Addr()+"@", "node %d's CLUSTER NODES", i)
		}
	}
	cl := clusterClient(t, c)

	keys := make([][]string, n)
	for i := range n {
		var err error
		keys[i], err = c.KeysOn(ctx, i, 10, "p:")
		require.NoError(t, err)
		setAll(t, cl, keys[i])
	}
	for i := range n {
		assert.Equal(t, len(keys[i]), c.Proxy(i).Seen(Command("SET")), "node %d's SETs came through its proxy", i)
		_, err := getOn(t, direct[other(c, i)], keys[i][0])
		assert.Equal(t, c.Proxy(i).Addr(), redirect(t, err, false), "MOVED names the owner's proxy")
	}

	// A reply held at one node's proxy holds that key only.
	held := keys[1][0]
	h := c.Proxy(1).HoldReplies(Command("GET", held))
	var got string
	var getErr error
	var wg sync.WaitGroup
	wg.Go(func() { got, getErr = cl.Do(ctx, cl.B().Get().Key(held).Build()).ToString() })
	require.NoError(t, h.Held(boundedCtx(t)))
	assert.True(t, h.Holding(held))
	for _, i := range []int{0, 2} {
		v, err := cl.Do(boundedCtx(t), cl.B().Get().Key(keys[i][0]).Build()).ToString()
		require.NoError(t, err, "node %d is served while node 1's reply is held", i)
		assert.Equal(t, keys[i][0], v)
	}
	h.Release()
	wg.Wait()
	require.NoError(t, getErr)
	assert.Equal(t, held, got)

	// A move's redirects name the proxies.
	slot := Slot(keys[0][0])
	m, err := c.BeginMove(ctx, slot, 2)
	require.NoError(t, err)
	absent := "{" + keys[0][0] + "}absent"
	require.Equal(t, slot, Slot(absent))
	_, err = getOn(t, direct[0], absent)
	assert.Equal(t, c.Addr(2), redirect(t, err, true), "ASK names the target's proxy")
	_, err = m.MigrateKeys(ctx, 0)
	require.NoError(t, err)
	_, err = getOn(t, direct[0], keys[0][0])
	assert.Equal(t, c.Addr(2), redirect(t, err, true), "ASK names the target's proxy")
	require.NoError(t, m.Finish(ctx))
	_, err = getOn(t, direct[0], keys[0][0])
	assert.Equal(t, c.Addr(2), redirect(t, err, false), "MOVED names the new owner's proxy")
	v, err := cl.Do(boundedCtx(t), cl.B().Get().Key(keys[0][0]).Build()).ToString()
	require.NoError(t, err)
	assert.Equal(t, keys[0][0], v)
	assert.Positive(t, c.Proxy(2).Seen(Command("GET", keys[0][0])), "the cluster client followed to the new owner's proxy")

	// Killed behind its proxy: a connection is accepted, then closed.
	require.NoError(t, c.Kill(1))
	conn, err := net.Dial("tcp", c.Addr(1))
	require.NoError(t, err, "the proxy accepts")
	_, err = conn.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "and closes the connection it cannot forward")
	conn.Close()
	v, err = cl.Do(boundedCtx(t), cl.B().Get().Key(keys[2][0]).Build()).ToString()
	require.NoError(t, err, "node 2 is served with node 1 down")
	assert.Equal(t, keys[2][0], v)
	require.NoError(t, c.Restart(ctx, 1))
	err = cl.Do(boundedCtx(t), cl.B().Get().Key(held).Build()).Error()
	assert.True(t, rueidis.IsRedisNil(err), "node 1 is back, empty, through its proxy: %v", err)

	// Stop ends the nodes and the proxies and removes the folder it made.
	pids := make([]int, n)
	for i := range n {
		pids[i] = c.Node(i).PID()
	}
	require.NoError(t, c.Stop())
	for i := range n {
		assert.True(t, gone(pids[i]), "node %d's pid %d is gone", i, pids[i])
		_, err := net.Dial("tcp", c.Addr(i))
		assert.Error(t, err, "node %d's proxy is closed", i)
	}
	assert.NoDirExists(t, c.Dir(), "Stop removes the folder StartCluster made")
	require.NoError(t, c.Stop(), "Stop is idempotent")
	require.ErrorIs(t, c.Kill(0), ErrStopped)
	require.ErrorIs(t, c.Restart(ctx, 0), ErrStopped)
	_, err = c.Owner(ctx, 0)
	require.ErrorIs(t, err, ErrStopped)
	require.ErrorIs(t, c.Settle(ctx), ErrStopped)
}

func TestStartClusterFailures(t *testing.T) {
	binary := Require(t)

	t.Run("no redis-cli next to the binary", func(t *testing.T) {
		dir := t.TempDir()
		lone := filepath.Join(dir, "redis-server")
		require.NoError(t, os.Symlink(binary, lone))
		_, err := StartCluster(t.Context(), lone, ClusterOptions{Logger: testLogger(t), Dir: t.TempDir()})
		require.ErrorIs(t, err, ErrNoCLI)
		assert.Contains(t, err.Error(), filepath.Join(dir, "redis-cli"))
	})

	t.Run("a node that exits at start", func(t *testing.T) {
		dir := t.TempDir()
		_, err := StartCluster(t.Context(), binary, ClusterOptions{Logger: testLogger(t), Dir: dir, Extra: [][2]string{{"no-such-directive", "1"}}})
		require.ErrorIs(t, err, ErrEarlyExit)
		assert.Contains(t, err.Error(), "no-such-directive", "the log tail names the bad line")
		assert.FileExists(t, filepath.Join(dir, "node-0", "redis-1.log"), "the log is kept")
		assert.NoDirExists(t, filepath.Join(dir, "node-1"), "no other node was started")
	})

	t.Run("an ended context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		dir := t.TempDir()
		_, err := StartCluster(ctx, binary, ClusterOptions{Logger: testLogger(t), Dir: dir})
		require.ErrorIs(t, err, context.Canceled)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries, "nothing was started")
	})
}
