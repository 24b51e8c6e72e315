package mooncakedrv

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/patience"
)

// replicaStore is a pool of providers whose clients ask every put for
// replicas copies (the store config's replicas), isolated each in a
// network namespace of its own when the tier allows it.
func replicaStore(t *testing.T, providers, replicas int) *realStore {
	t.Helper()
	s := startRealStore(t, func(o *pool.Options) { o.Providers, o.Isolate = providers, pool.IsolationAllowed() })
	setReplicas(t, s, replicas)
	return s
}

// setReplicas makes every later client of s ask its puts for replicas
// copies (the store config's replicas).
func setReplicas(t *testing.T, s *realStore, replicas int) {
	t.Helper()
	cfg, err := os.ReadFile(s.config)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(s.config, fmt.Appendf(cfg, "replicas = %d\n", replicas), 0o644))
}

// replicaRows are n rows named prefix-i, slot i filled with seed i+1.
func replicaRows(r *realRig, prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprint(prefix, "-", i)
		r.mem.fill(i, byte(i+1))
	}
	return names
}

// keysOf are the store keys of names.
func keysOf(r *realRig, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = r.key(n)
	}
	return out
}

// checkReadBack checks that a get's Ready rows, read into the slots
// from, hold the bytes of slots 0… (filled by replicaRows), and that
// every other row is Fault.
func checkReadBack(t *testing.T, r *realRig, st contract.OpState, from int, what string) (ready int) {
	t.Helper()
	for i, s := range st.Rows {
		switch s {
		case contract.Ready:
			ready++
			assert.Equal(t, pattern(byte(i+1), len(r.mem.slot(from+i))), r.mem.slot(from+i), "%s: row %d's bytes", what, i)
		case contract.Fault:
		default:
			t.Errorf("%s: row %d ended %v, want Ready or Fault", what, i, s)
		}
	}
	return ready
}

// With replicas 2 over two providers, a put is Ready only once both
// copies are written: while one provider is frozen mid-put, exists says
// 0 for every key (no copy counts until the put ends at the master, once
// for all of them), and when the frozen copy's transfer times out the
// whole put answers -800 and stores nothing.
func TestRealReplicasExistOnlyOnceEveryCopyIsWritten(t *testing.T) {
	s := replicaStore(t, 2, 2)
	const rows, slotBytes = 8, 64 << 10
	r := openRealRigOver(t, s, keptMemory(t, rows, slotBytes), "kvshare-realpool/replicas-held")
	probe := openRealRig(t, s, 1, slotBytes, "kvshare-realpool/replicas-held")
	names := replicaRows(r, "held", rows)
	keys := keysOf(r, names)

	require.NoError(t, s.pool.FreezeProvider(1))
	defer func() { assert.NoError(t, s.pool.ResumeProvider(1)) }()
	f, ch := notify()
	op, err := r.drv.Put(r.batch(names, span(0, rows)...), f)
	require.NoError(t, err)
	exists := make([]int32, rows)
	for range 2 {
		time.Sleep(500 * time.Millisecond)
		require.NoError(t, probe.drv.store.current().BatchIsExist(keys, exists))
		if op.Poll(nil).Access == contract.Open {
			assert.Equal(t, make([]int32, rows), exists, "while a copy of every key is held, no key exists")
		}
	}
	st := settleWithin(t, op, ch, realWait)
	assert.Equal(t, statuses(contract.Fault, rows), st.Rows, "one copy's transfer failed: the whole put fails")
	assert.Equal(t, contract.Unprovable, st.Access, "-800: the held transfer may still run")
	require.NoError(t, probe.drv.store.current().BatchIsExist(keys, exists))
	assert.Equal(t, make([]int32, rows), exists, "the put stored nothing")
	clientsKept.Add(1)
	r.keep()
}

// With replicas 2 over two providers, a get reads the first copy the
// master lists and tries no other: with one provider killed, the rows
// whose first copy lived there answer -800 (Fault, access Unprovable)
// although their other copy is whole, and exists still says 1. Once the
// master's client_ttl has dropped the dead provider's segment, a fresh
// driver reads every row from the copy left.
func TestRealReplicasAfterAProviderDies(t *testing.T) {
	s := replicaStore(t, 2, 2)
	const rows, slotBytes = 8, 64 << 10
	r := openRealRigOver(t, s, keptMemory(t, 2*rows, slotBytes), "kvshare-realpool/replicas")
	names := replicaRows(r, "rep", rows)
	require.Equal(t, statuses(contract.Ready, rows), r.put(names, span(0, rows)...).Rows)
	st := r.get(names, span(rows, 2*rows)...)
	require.Equal(t, statuses(contract.Ready, rows), st.Rows)
	checkReadBack(t, r, st, rows, "both providers up")

	require.NoError(t, s.pool.KillProviderAt(0))
	for i := range rows {
		clear(r.mem.slot(rows + i))
	}
	st = r.get(names, span(rows, 2*rows)...)
	ready := checkReadBack(t, r, st, rows, "one provider killed")
	t.Logf("one provider killed: %d of %d rows Ready, the rest -800: %v %v", ready, rows, st.Rows, st.Access)
	if ready < rows {
		assert.Equal(t, contract.Unprovable, st.Access, "a -800 leaves the access unprovable")
		clientsKept.Add(1)
		r.keep()
	}
	exists := make([]int32, rows)
	require.NoError(t, r.drv.store.current().BatchIsExist(keysOf(r, names), exists))
	assert.Equal(t, []int32{1, 1, 1, 1, 1, 1, 1, 1}, exists, "the master still lists the dead provider's copies")

	// Past the master's client_ttl (10 s, the scenario), with a margin
	// from patience for the master to act on it.
	time.Sleep(10*time.Second + patience.Scaled(2*time.Second))
	fresh := openRealRig(t, s, rows, slotBytes, "kvshare-realpool/replicas")
	st = fresh.get(names, span(0, rows)...)
	assert.Equal(t, statuses(contract.Ready, rows), st.Rows, "every key read from its surviving copy")
	assert.Equal(t, contract.Ended, st.Access)
	for i := range rows {
		assert.Equal(t, pattern(byte(i+1), slotBytes), fresh.mem.slot(i), "row %d's bytes", i)
	}
}

// Three providers, each in a network namespace of its own, replicas 2:
// rows stored and read back across the bridge; with one provider's link
// down, a get ends (within the tier's one SYN retry, not the kernel's
// two minutes) with the rows whose first copy lives there Fault and the
// others Ready; with the link up again, a fresh driver reads every row.
func TestRealACutOffProvider(t *testing.T) {
	if !pool.IsolationAllowed() {
		t.Skip("providers are not isolated here (" + pool.EnvIsolate + " unset: not in the tier's own network namespace), so none can be cut off")
	}
	s := replicaStore(t, 3, 2)
	require.True(t, s.pool.Isolated(), "isolation allowed, yet the pool could not isolate its providers")
	const rows, slotBytes = 8, 64 << 10
	r := openRealRigOver(t, s, keptMemory(t, 2*rows, slotBytes), "kvshare-realpool/cut")
	names := replicaRows(r, "cut", rows)
	require.Equal(t, statuses(contract.Ready, rows), r.put(names, span(0, rows)...).Rows)
	require.Equal(t, statuses(contract.Ready, rows), r.get(names, span(rows, 2*rows)...).Rows)

	require.NoError(t, s.pool.CutProvider(0))
	start := time.Now()
	f, ch := notify()
	op, err := r.drv.Get(r.batch(names, span(rows, 2*rows)...), nil, f)
	require.NoError(t, err)
	// 90 s is the property, not a bound on progress: well under the
	// kernel's two minutes of SYN retries (extended only while starved).
	st := settleWithin(t, op, ch, 90*time.Second)
	ready := checkReadBack(t, r, st, rows, "a provider cut off")
	t.Logf("a provider cut off: the get ended after %v, %d of %d rows Ready: %v %v", time.Since(start).Round(time.Millisecond), ready, rows, st.Rows, st.Access)
	require.NoError(t, s.pool.HealProvider(0))
	if ready < rows {
		assert.Equal(t, contract.Unprovable, st.Access)
		clientsKept.Add(1)
		r.keep()
	}

	fresh := openRealRig(t, s, rows, slotBytes, "kvshare-realpool/cut")
	st = fresh.get(names, span(0, rows)...)
	assert.Equal(t, statuses(contract.Ready, rows), st.Rows, "the link up again: every row read")
	assert.Equal(t, contract.Ended, st.Access)
}
