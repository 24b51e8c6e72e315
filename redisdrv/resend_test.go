package redisdrv

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/patience"
	"github.com/kvshare/kvshare/redisdrv/redistest"
)

// The tests of the resend after a dead connection. Each first leaves
// every connection of the client's stream pool idle (a burst in which
// every worker was in flight at once, held by the proxies until each
// holds one reply a worker), then has the server end them all while
// they sit idle: a restart, or the server's own idle timeout. The first
// put and get after it must be served, the server being up and holding
// the value, though the first connections they get are all dead.

const burstWorkers = 4

// TestFirstCallsAfterARestartPastABurst: after a burst of gets that had
// every worker in flight at once, the server is killed and restarted;
// the first put and the first get after it are Ready (the get with the
// value seeded after the restart), and lookups answer.
func TestFirstCallsAfterARestartPastABurst(t *testing.T) {
	s := startServer(t, redistest.Options{})
	p := proxyFor(t, s.Addr())
	r := newRig(t, s, p.Addr(), burstWorkers+2, 64<<10, Config{Workers: burstWorkers})
	burst(t, r, s.seed, []*redistest.Proxy{p}, oneEach(names("burst", burstWorkers)))

	require.NoError(t, s.Kill())
	require.NoError(t, s.Restart(t.Context()))
	firstCalls(t, r, s.seed, []string{"after"}, []string{"stored"})
}

// TestIdleConnectionsClosedByTheServer: a server that closes idle
// connections (timeout 1 in redis.conf, as many deployments set) closes
// every connection a burst left pooled, with no restart at all; the
// next put and get are Ready.
func TestIdleConnectionsClosedByTheServer(t *testing.T) {
	s := startServer(t, redistest.Options{Extra: [][2]string{{"timeout", "1"}}})
	p := proxyFor(t, s.Addr())
	r := newRig(t, s, p.Addr(), burstWorkers+2, 64<<10, Config{Workers: burstWorkers})
	burst(t, r, s.seed, []*redistest.Proxy{p}, oneEach(names("burst", burstWorkers)))

	// The burst's connections last ran GET; the server closes each once
	// it sat idle past the timeout.
	waitUntil(t, "the server closes the connections the burst left idle", func() int {
		return s.clientsLast(t, "get")
	}, 0)
	firstCalls(t, r, s.seed, []string{"after"}, []string{"stored"})
}

// TestClusterFirstCallsAfterEveryNodeRestarted: over a cluster, a burst
// whose every part had rows on every node leaves each node's client
// with a connection a worker pooled; every node is killed and restarted
// in turn; the first put and get after it, each with a row on every
// node, are Ready on every node.
func TestClusterFirstCallsAfterEveryNodeRestarted(t *testing.T) {
	c := startCluster(t, redistest.ClusterOptions{})
	nodes := len(c.nodes)
	r := clusterRig(t, c, burstWorkers*nodes+2*nodes, 64<<10, Config{Workers: burstWorkers})
	spreadNames, at := spread(r, c, "burst", burstWorkers)
	parts := make([][]string, burstWorkers) // part i: the i-th name of each node
	seen := make([]int, nodes)
	for k, n := range spreadNames {
		parts[seen[at[k]]] = append(parts[seen[at[k]]], n)
		seen[at[k]]++
	}
	burst(t, r, c.seed, c.proxies(), parts)

	for i := range nodes {
		require.NoError(t, c.Kill(i))
		require.NoError(t, c.Restart(t.Context(), i))
	}
	puts, _ := spread(r, c, "after", 1)
	gets, _ := spread(r, c, "stored", 1)
	firstCalls(t, r, c.seed, puts, gets)
}

// oneEach makes one part of each name.
func oneEach(ns []string) [][]string {
	parts := make([][]string, len(ns))
	for i, n := range ns {
		parts[i] = []string{n}
	}
	return parts
}

// proxyFor is a proxy in front of addr, closed with the test.
func proxyFor(t *testing.T, addr string) *redistest.Proxy {
	t.Helper()
	p, err := redistest.NewProxy(addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// burst seeds the names of parts, then gets each part as an operation of
// its own (each one part: one worker), the proxies holding every GET
// reply until each proxy holds one on each of len(parts) connections:
// every worker in flight at once, so the client's stream pool (each
// node's, on a cluster) holds one connection a worker. Then it lets the
// replies go and checks every row Ready. The burst's rows take the
// rig's first slots.
func burst(t *testing.T, r *rig, seed func(testing.TB, string, []byte), proxies []*redistest.Proxy, parts [][]string) {
	t.Helper()
	require.LessOrEqual(t, len(parts), r.d.cfg.Workers, "a burst of more parts than workers cannot have each in flight")
	var keys []string
	for _, part := range parts {
		for _, n := range part {
			keys = append(keys, r.key(n))
			seed(t, r.key(n), rowData(len(keys), r.slot))
		}
	}
	holds := make([]*redistest.Hold, len(proxies))
	for i, p := range proxies {
		holds[i] = p.HoldReplies(redistest.Command("GET", keys...))
	}
	ops := make([]contract.Operation, len(parts))
	slots := make([][]int, len(parts))
	next := 0
	for i, part := range parts {
		slots[i] = seq(next, len(part))
		next += len(part)
		ops[i] = r.start(contract.GetDir, part, slots[i])
	}
	waitUntil(t, "every worker in flight on every server", func() int {
		short := 0
		for _, h := range holds {
			short += len(parts) - h.Count()
		}
		return short
	}, 0)
	for _, h := range holds {
		h.Release()
	}
	for i, op := range ops {
		st := r.settle(op, nil)
		require.Equal(t, contract.Ended, st.Access)
		for j, row := range st.Rows {
			require.Equal(t, contract.Ready, row, "burst part %d row %d", i, j)
		}
		r.seal(slots[i]...)
	}
}

// firstCalls checks the driver's first calls after its pooled
// connections died: a put of puts (one row each, one operation) is
// Ready and stored whole, a get of gets (their values seeded now, the
// server up and holding them) is Ready and reads them whole, and a
// lookup finds both. The rows take the rig's last slots.
func firstCalls(t *testing.T, r *rig, seed func(testing.TB, string, []byte), puts, gets []string) {
	t.Helper()
	before := r.d.Stats().Resends
	total := int(int64(len(r.mem)) / r.slot)
	putSlots := seq(total-len(puts)-len(gets), len(puts))
	getSlots := seq(total-len(gets), len(gets))
	r.fill(putSlots...)
	want := make([][]byte, len(puts))
	for i, s := range putSlots {
		want[i] = bytes.Clone(r.slotBytes(s))
	}
	st := r.run(contract.PutDir, puts, putSlots)
	assert.Equal(t, contract.Ended, st.Access)
	for i, row := range st.Rows {
		assert.Equal(t, contract.Ready, row, "the first put after the connections died, row %d (%s): the server is up", i, puts[i])
	}
	for i, n := range gets {
		seed(t, r.key(n), rowData(1000+i, r.slot))
	}
	st = r.settle(r.start(contract.GetDir, gets, getSlots), nil)
	assert.Equal(t, contract.Ended, st.Access)
	for i, row := range st.Rows {
		assert.Equal(t, contract.Ready, row, "the first get after the connections died, row %d (%s): the server holds the value", i, gets[i])
		if row == contract.Ready {
			assert.Equal(t, rowData(1000+i, r.slot), r.slotBytes(getSlots[i]), "row %d read whole", i)
		}
	}
	r.seal(getSlots...)
	// Every connection of the pool was dead: some send met more than
	// one, which is what a single resend could not get past.
	assert.Greater(t, r.d.Stats().Resends-before, int64(1), "the calls met the dead pooled connections one after another")
	for i, pr := range r.lookup(t.Context(), append(append([]string{}, puts...), gets...)...) {
		assert.Equal(t, contract.Present, pr, "lookup %d", i)
	}
	r.sealsHold()
}

// waitUntil polls left, on the test's goroutine, until it returns want,
// within a patient bound that extends while the value moves.
func waitUntil(t *testing.T, what string, left func() int, want int) {
	t.Helper()
	var now atomic.Int64
	now.Store(int64(left()))
	last := now.Load()
	moved := func() bool { // on the bound's goroutine
		n := now.Load()
		m := n != last
		last = n
		return m
	}
	ctx, cancel := patience.Bound{Span: patience.Wait(), What: what, Moved: moved, Logf: t.Logf}.Context(t.Context())
	defer cancel()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for now.Load() != int64(want) {
		select {
		case <-ctx.Done():
			require.Failf(t, "gave up waiting", "%s: still %d, want %d", what, now.Load(), want)
		case <-tick.C:
			now.Store(int64(left()))
		}
	}
}

// clientsLast counts the server's client connections whose last command
// was cmd (CLIENT LIST's cmd field).
func (s *server) clientsLast(t testing.TB, cmd string) int {
	t.Helper()
	list, err := s.do(t, func(b rueidis.Builder) rueidis.Completed { return b.ClientList().Build() }).ToString()
	require.NoError(t, err)
	n := 0
	sc := bufio.NewScanner(strings.NewReader(list))
	for sc.Scan() {
		if strings.Contains(" "+sc.Text()+" ", fmt.Sprintf(" cmd=%s ", cmd)) {
			n++
		}
	}
	return n
}
