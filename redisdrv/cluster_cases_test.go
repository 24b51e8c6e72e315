package redisdrv

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/redisdrv/redistest"
)

// clusterRig is a rig over a driver of c, its region slots of slotBytes.
func clusterRig(t *testing.T, c *cluster, slots int, slotBytes int64, cfg Config) *rig {
	t.Helper()
	return rigOver(t, nil, clusterDriver(t, c.Addrs(), cfg), slots, slotBytes)
}

// spread returns per names for each node of c, node by node (names
// stem-0, stem-1, … kept where their keys fall), and each name's node.
func spread(r *rig, c *cluster, stem string, per int) (names []string, nodes []int) {
	byNode := make([][]string, len(c.nodes))
	for i := 0; ; i++ {
		full := true
		for _, ns := range byNode {
			full = full && len(ns) == per
		}
		if full {
			break
		}
		n := fmt.Sprintf("%s-%d", stem, i)
		at := c.owners[redistest.Slot(r.key(n))]
		if len(byNode[at]) < per {
			byNode[at] = append(byNode[at], n)
		}
	}
	for at, ns := range byNode {
		for _, n := range ns {
			names = append(names, n)
			nodes = append(nodes, at)
		}
	}
	return names, nodes
}

// rowData is the bytes row i of a test stores: its own pattern.
func rowData(i int, n int64) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(i*13 + j*5 + 3)
	}
	return b
}

// waitRows polls op until want(row status) holds for every row in rows,
// bounded; it returns the last state.
func waitRows(t *testing.T, op contract.Operation, rows []int, want contract.RowStatus) contract.OpState {
	t.Helper()
	ctx, cancel := bound(t, 30*time.Second, "rows ending").Context(context.Background())
	defer cancel()
	for {
		st := op.Poll(nil)
		done := true
		for _, i := range rows {
			done = done && st.Rows[i] == want
		}
		if done {
			return st
		}
		require.NoError(t, ctx.Err(), "rows %v did not all end %v within the bound: %v", rows, want, st)
		time.Sleep(2 * time.Millisecond)
	}
}

// A node killed in the middle of a get whose rows lie on all three
// nodes: the other nodes' rows end Ready (and are recorded while the
// killed node's round trip is still open, the access staying Open), the
// killed node's rows end Fault, the access ends only once its round
// trip returned, and no slot changes after that.
func TestClusterNodeKilledMidGet(t *testing.T) {
	c := startCluster(t, redistest.ClusterOptions{})
	r := clusterRig(t, c, 16, 256<<10, Config{Workers: 1, RowsPerCall: 16})
	rows, nodes := spread(r, c, "kill-get", 3)
	for i, n := range rows {
		c.seed(t, r.key(n), rowData(i, r.slot))
	}
	const victim = 1
	var victimRows, others []int
	for i, at := range nodes {
		if at == victim {
			victimRows = append(victimRows, i)
		} else {
			others = append(others, i)
		}
	}
	stall := c.Proxy(victim).StallReplies(redistest.Command("GET", r.key(rows[victimRows[0]])), 100<<10)
	op := r.start(contract.GetDir, rows, seq(0, len(rows)))
	ctx, cancel := bound(t, 30*time.Second, "a held reply").Context(t.Context())
	defer cancel()
	require.NoError(t, stall.Held(ctx))
	st := waitRows(t, op, others, contract.Ready)
	assert.Equal(t, contract.Open, st.Access, "the killed node's round trip is still open: nothing is released early")
	for _, i := range others {
		assert.Equal(t, rowData(i, r.slot), r.slotBytes(i), "row %d, Ready, holds its value", i)
	}
	require.NoError(t, c.Kill(victim))
	c.Proxy(victim).DropAll()
	st = r.settle(op, seq(0, len(rows)))
	stall.Release()
	assert.Equal(t, contract.Ended, st.Access, "a lost connection ends the access")
	for i, at := range nodes {
		want := contract.Ready
		if at == victim {
			want = contract.Fault
		}
		assert.Equal(t, want, st.Rows[i], "row %d on node %d", i, at)
	}
	time.Sleep(100 * time.Millisecond) // anything late would land now
	r.sealsHold()
}

// A node killed in the middle of a put: its rows Fault, the others
// Ready and stored; the slots, sealed at the access end, are never read
// into the store.
func TestClusterNodeKilledMidPut(t *testing.T) {
	c := startCluster(t, redistest.ClusterOptions{})
	r := clusterRig(t, c, 16, 256<<10, Config{Workers: 1, RowsPerCall: 16})
	rows, nodes := spread(r, c, "kill-put", 3)
	for i := range rows {
		copy(r.slotBytes(i), rowData(i, r.slot))
	}
	const victim = 2
	var first string
	for i, at := range nodes {
		if at == victim && first == "" {
			first = r.key(rows[i])
		}
	}
	hold := c.Proxy(victim).HoldReplies(redistest.Command("SET", first))
	op := r.start(contract.PutDir, rows, seq(0, len(rows)))
	ctx, cancel := bound(t, 30*time.Second, "a held reply").Context(t.Context())
	defer cancel()
	require.NoError(t, hold.Held(ctx))
	require.NoError(t, c.Kill(victim))
	c.Proxy(victim).DropAll()
	st := r.settle(op, seq(0, len(rows)))
	hold.Release()
	assert.Equal(t, contract.Ended, st.Access)
	for i, at := range nodes {
		if at == victim {
			assert.Equal(t, contract.Fault, st.Rows[i], "row %d on the killed node", i)
			continue
		}
		assert.Equal(t, contract.Ready, st.Rows[i], "row %d on node %d", i, at)
		v, ok := c.object(t, r.key(rows[i]))
		assert.True(t, ok && bytes.Equal(rowData(i, r.slot), v), "row %d is stored whole", i)
	}
	require.NoError(t, c.Restart(t.Context(), victim))
	for i := range rows {
		if v, ok := c.object(t, r.key(rows[i])); ok {
			assert.Equal(t, rowData(i, r.slot), v, "row %d: a stored object is the row's data, never the seal", i)
		}
	}
	r.sealsHold()
}

// A node restarted empty (its slots kept, its data gone): its rows Miss,
// the other nodes' rows Ready with their values, and lookups say Absent
// and Present alike.
func TestClusterNodeRestartedEmpty(t *testing.T) {
	c := startCluster(t, redistest.ClusterOptions{})
	r := clusterRig(t, c, 32, 64<<10, Config{})
	rows, nodes := spread(r, c, "restart", 4)
	n := len(rows)
	for i := range rows {
		copy(r.slotBytes(i), rowData(i, r.slot))
	}
	st := r.run(contract.PutDir, rows, seq(0, n))
	require.Equal(t, n, statuses(st, contract.Ready), "%v", st.Rows)
	const victim = 0
	require.NoError(t, c.Kill(victim))
	require.NoError(t, c.Restart(t.Context(), victim))
	got := r.lookup(t.Context(), rows...)
	st = r.get(rows, seq(n, n))
	for i, at := range nodes {
		if at == victim {
			assert.Equal(t, contract.Miss, st.Rows[i], "row %d on the restarted node", i)
			assert.Equal(t, contract.Absent, got[i], "lookup of row %d on the restarted node", i)
			continue
		}
		assert.Equal(t, contract.Ready, st.Rows[i], "row %d on node %d", i, at)
		assert.Equal(t, rowData(i, r.slot), r.slotBytes(n+i), "row %d read back", i)
		assert.Equal(t, contract.Present, got[i], "lookup of row %d", i)
	}
	r.seal(seq(n, n)...)
	r.sealsHold()
}

// A slot moved while the driver reads and writes it: while it migrates,
// the old owner answers ASK for what moved, and the driver asks the new
// one after ASKING (gets, puts of new keys and lookups); once the move
// is finished, the old owner answers MOVED and the driver goes to the
// new one and reads the slot map again. Every value read is checked.
func TestClusterSlotMovedUnderTheDriver(t *testing.T) {
	c := startCluster(t, redistest.ClusterOptions{})
	r := clusterRig(t, c, 8, 32<<10, Config{})
	rows, nodes := spread(r, c, "moved", 1)
	for i := range rows {
		copy(r.slotBytes(i), rowData(i, r.slot))
	}
	require.Equal(t, 3, statuses(r.run(contract.PutDir, rows, seq(0, 3)), contract.Ready))
	slot := redistest.Slot(r.key(rows[0]))
	from, to := nodes[0], nodes[1]
	ctx, cancel := bound(t, 60*time.Second, "the slot's move").Context(t.Context())
	defer cancel()
	m, err := c.BeginMove(ctx, slot, to)
	require.NoError(t, err)
	require.Equal(t, from, m.From())
	moved, err := m.MigrateKeys(ctx, 10)
	require.NoError(t, err)
	require.Equal(t, 1, moved)

	// Migrating: rows[0] lives on the new owner only.
	st := r.get(rows, seq(3, 3))
	assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Ready, contract.Ready}, st.Rows)
	for i := range rows {
		assert.Equal(t, rowData(i, r.slot), r.slotBytes(3+i), "row %d read back", i)
	}
	r.seal(seq(3, 3)...)
	assert.Positive(t, r.d.Stats().Asked, "the old owner answered ASK")
	assert.Equal(t, contract.Present, r.lookup(ctx, rows[0])[0], "a lookup follows ASK too")
	fresh := nameInSlot(r, slot, "moved-fresh")
	copy(r.slotBytes(6), rowData(6, r.slot))
	assert.Equal(t, []contract.RowStatus{contract.Ready}, r.run(contract.PutDir, []string{fresh}, []int{6}).Rows,
		"a new key of a migrating slot is put on the new owner")

	require.NoError(t, m.Finish(ctx))
	c.refresh(t)
	v, ok := c.object(t, r.key(fresh))
	require.True(t, ok, "the new key lives on the new owner")
	assert.Equal(t, rowData(6, r.slot), v)
	reads := r.d.Stats().SlotMapReads
	st = r.get([]string{rows[0], fresh}, []int{3, 7})
	assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Ready}, st.Rows)
	assert.Equal(t, rowData(0, r.slot), r.slotBytes(3))
	assert.Equal(t, rowData(6, r.slot), r.slotBytes(7))
	r.seal(3, 7)
	r.sealsHold()
	assert.Positive(t, r.d.Stats().Moved, "the old owner answered MOVED")
	assert.Greater(t, r.d.Stats().SlotMapReads, reads, "MOVED reads the slot map again")
	assert.Equal(t, []string(nil), unique(r.d.Nodes(), c.Addrs()), "the driver's nodes are the cluster's")
}

// nameInSlot finds a name whose key falls in slot.
func nameInSlot(r *rig, slot int, stem string) string {
	for i := 0; ; i++ {
		n := fmt.Sprintf("%s-%d", stem, i)
		if redistest.Slot(r.key(n)) == slot {
			return n
		}
	}
}

// unique returns the addresses of a not in b.
func unique(a, b []string) []string {
	var out []string
	for _, x := range a {
		found := false
		for _, y := range b {
			found = found || x == y
		}
		if !found {
			out = append(out, x)
		}
	}
	return out
}

// Slots resharded while gets and puts run from two goroutines: every
// row of every operation ends Ready, every value read is its row's, and
// the driver followed what the moves made the nodes answer.
func TestClusterReshardUnderTraffic(t *testing.T) {
	c := startCluster(t, redistest.ClusterOptions{})
	const perNode, rowBytes = 8, 16 << 10
	r := clusterRig(t, c, 2*3*perNode+64, rowBytes, Config{RowsPerCall: 8})
	rows, nodes := spread(r, c, "traffic", perNode)
	n := len(rows)
	for i := range rows {
		copy(r.slotBytes(i), rowData(i, rowBytes))
	}
	require.Equal(t, n, statuses(r.run(contract.PutDir, rows, seq(0, n)), contract.Ready))

	ctx, cancel := bound(t, 120*time.Second, "the moves under traffic").Context(t.Context())
	defer cancel()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var rounds int
	var failures []string
	var mu sync.Mutex
	wg.Go(func() { // gets of every row, checked, until the moves end
		for {
			select {
			case <-stop:
				return
			default:
			}
			op, err := r.d.Get(r.batch(rows, seq(n, n)), nil, nil)
			if err != nil {
				mu.Lock()
				failures = append(failures, err.Error())
				mu.Unlock()
				return
			}
			st := waitAccess(t, op)
			mu.Lock()
			rounds++
			for i, s := range st.Rows {
				if s != contract.Ready {
					failures = append(failures, fmt.Sprintf("round %d: row %d (node %d at start) ended %v", rounds, i, nodes[i], s))
				} else if !bytes.Equal(rowData(i, rowBytes), r.slotBytes(n+i)) {
					failures = append(failures, fmt.Sprintf("round %d: row %d read back other bytes", rounds, i))
				}
			}
			mu.Unlock()
		}
	})
	var puts []string
	wg.Go(func() { // puts of new keys, one at a time, each checked later
		base := 2 * n
		for k := 0; k < 64; k++ {
			select {
			case <-stop:
				return
			default:
			}
			name := fmt.Sprintf("traffic-new-%d", k)
			copy(r.slotBytes(base+k), rowData(base+k, rowBytes))
			op, err := r.d.Put(r.batch([]string{name}, []int{base + k}), nil)
			if err == nil {
				if st := waitAccess(t, op); st.Rows[0] != contract.Ready {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("put %s ended %v", name, st.Rows[0]))
					mu.Unlock()
				}
			}
			mu.Lock()
			puts = append(puts, name)
			mu.Unlock()
		}
	})
	// traffic waits until the gets made two more rounds.
	traffic := func() {
		mu.Lock()
		want := rounds + 2
		mu.Unlock()
		for {
			mu.Lock()
			done := rounds >= want || len(failures) > 0
			mu.Unlock()
			if done || ctx.Err() != nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	// Move the slot of one row of each node to the next node, step by
	// step, with gets at every step: while the slot migrates with its
	// key still on the old owner, once the key moved (the old owner
	// answers ASK), and once the move is finished (it answers MOVED).
	for at := range 3 {
		slot := redistest.Slot(r.key(rows[at*perNode]))
		m, err := c.BeginMove(ctx, slot, (at+1)%3)
		require.NoError(t, err, "moving slot %d", slot)
		traffic()
		_, err = m.MigrateKeys(ctx, 10)
		require.NoError(t, err, "moving slot %d's keys", slot)
		traffic()
		require.NoError(t, m.Finish(ctx), "finishing slot %d's move", slot)
		traffic()
	}
	close(stop)
	wg.Wait()
	assert.Empty(t, failures)
	assert.Positive(t, rounds)
	st := r.d.Stats()
	t.Logf("%d get rounds; moved %d, asked %d, slot map read %d times", rounds, st.Moved, st.Asked, st.SlotMapReads)
	assert.Positive(t, st.Asked, "the old owners answered ASK for keys moved")
	assert.Positive(t, st.Moved, "the old owners answered MOVED once the moves finished")
	c.refresh(t)
	for _, name := range puts {
		k := 0
		_, _ = fmt.Sscanf(name, "traffic-new-%d", &k)
		v, ok := c.object(t, r.key(name))
		assert.True(t, ok && bytes.Equal(rowData(2*n+k, rowBytes), v), "%s is stored whole on its slot's owner", name)
	}
}

// get runs a get of names into slots and returns its state once its
// access left Open, the slots unsealed (the caller reads them, then
// seals).
func (r *rig) get(names []string, slots []int) contract.OpState {
	r.t.Helper()
	return waitAccess(r.t, r.start(contract.GetDir, names, slots))
}

// waitAccess polls op until its access leaves Open, within a patient
// bound; past it, it returns the state as it is (the caller checks it).
func waitAccess(t testing.TB, op contract.Operation) contract.OpState {
	ctx, cancel := bound(t, 60*time.Second, "an access ending").Context(context.Background())
	defer cancel()
	for {
		st := op.Poll(nil)
		if st.Access != contract.Open || ctx.Err() != nil {
			return st
		}
		time.Sleep(time.Millisecond)
	}
}
