package redisdrv

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/patience"
	"github.com/kvshare/kvshare/redisdrv/redistest"
)

// A server at its maxmemory with noeviction refuses SET with an OOM
// error: the rows are Declined, nothing is stored under their keys, and
// the rows stored before stay Ready.
func TestMaxMemoryReachedIsDeclined(t *testing.T) {
	s := startServer(t, redistest.Options{MaxMemory: 8 << 20})
	r := newRig(t, s, s.Addr(), 32, 512<<10, Config{Workers: 1, RowsPerCall: 4})
	r.fill(seq(0, 32)...)
	st := r.run(contract.PutDir, names("row", 32), seq(0, 32))
	assert.Equal(t, contract.Ended, st.Access)
	declined := statuses(st, contract.Declined)
	assert.Positive(t, declined, "16 MiB into a server of 8 MiB: %v", st.Rows)
	assert.Positive(t, statuses(st, contract.Ready), "the first rows fit: %v", st.Rows)
	assert.Equal(t, 32, declined+statuses(st, contract.Ready), "Ready or Declined, nothing else: %v", st.Rows)
	for i, row := range st.Rows {
		_, stored := s.object(t, r.key(names("row", 32)[i]))
		assert.Equal(t, row == contract.Ready, stored, "row %d ended %v", i, row)
	}
	assert.Equal(t, int64(declined), r.d.Stats().PutRows[contract.Declined])
}

// On an allkeys-lru server, a key that was Present when looked up and
// evicted before the get reads Miss, its slot untouched.
func TestEvictedBetweenLookupAndGetIsMiss(t *testing.T) {
	s := startServer(t, redistest.Options{MaxMemory: 8 << 20, Policy: "allkeys-lru"})
	r := newRig(t, s, s.Addr(), 2, 256<<10, Config{})
	r.fill(0)
	require.Equal(t, []contract.RowStatus{contract.Ready}, r.run(contract.PutDir, []string{"evicted"}, []int{0}).Rows)
	require.Equal(t, []contract.Presence{contract.Present}, r.lookup(t.Context(), "evicted"))

	filler := bytes.Repeat([]byte{7}, 256<<10)
	for i := 0; ; i++ {
		require.Less(t, i, 1000, "the key was never evicted")
		s.seed(t, r.prefix+"/filler/"+itoa(int64(i)), filler)
		if _, ok := s.object(t, r.key("evicted")); !ok {
			break
		}
	}
	require.Equal(t, []contract.Presence{contract.Absent}, r.lookup(t.Context(), "evicted"))
	r.fill(1)
	before := bytes.Clone(r.slotBytes(1))
	st := r.settle(r.start(contract.GetDir, []string{"evicted"}, []int{1}), nil)
	assert.Equal(t, []contract.RowStatus{contract.Miss}, st.Rows)
	assert.Equal(t, contract.Ended, st.Access)
	assert.Equal(t, before, r.slotBytes(1), "a Miss writes nothing")
}

// A get whose connection dies in the middle of a value (the proxy stops
// after half of row 2's bytes, then the server is killed and the
// connection cut): rows from there on are Fault, the access ends only
// once the round trip returned, and no slot changes after it ended.
// The server, restarted on its port, serves the driver's next calls,
// the first one included.
func TestServerKilledMidBatch(t *testing.T) {
	s := startServer(t, redistest.Options{})
	p, err := redistest.NewProxy(s.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	r := newRig(t, s, p.Addr(), 12, 1<<20, Config{Workers: 1, RowsPerCall: 6})
	rows := names("killed", 6)
	for i, n := range rows {
		s.seed(t, r.key(n), bytes.Repeat([]byte{byte(i + 1)}, 1<<20))
	}
	stall := p.StallReplies(redistest.Command("GET", r.key(rows[2])), 512<<10)
	op := r.start(contract.GetDir, rows, seq(0, 6))
	ctx, cancel := bound(t, 30*time.Second, "a held reply").Context(t.Context())
	defer cancel()
	require.NoError(t, stall.Held(ctx))
	assert.Equal(t, contract.Open, op.Poll(nil).Access, "half a value landed: the access is open")
	require.NoError(t, s.Kill())
	p.DropAll()
	st := r.settle(op, seq(0, 6))
	stall.Release()
	assert.Equal(t, contract.Ended, st.Access, "a lost connection ends the access: nothing reads it any more")
	assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Ready, contract.Fault, contract.Fault, contract.Fault, contract.Fault}, st.Rows)

	require.NoError(t, s.Restart(t.Context()))
	r.fill(6, 7)
	// The pooled connection the kill broke answers the first pipeline
	// with EOF before any reply: the driver sends it again on a fresh one.
	assert.Equal(t, []contract.RowStatus{contract.Ready}, r.run(contract.PutDir, []string{"after"}, []int{6}).Rows,
		"the restarted server serves the first put")
	s.seed(t, r.key("fresh"), bytes.Repeat([]byte{9}, 1<<20))
	st = r.run(contract.GetDir, []string{"fresh"}, []int{7})
	assert.Equal(t, []contract.RowStatus{contract.Ready}, st.Rows)
	time.Sleep(100 * time.Millisecond) // anything late would land now
	r.sealsHold()
}

// A put killed mid-batch: every row is Ready or Fault, the access ends,
// and the slots, sealed at its end, are never read into the store: an
// object found later is the row's data or nothing, never the seal.
func TestServerKilledMidPut(t *testing.T) {
	s := startServer(t, redistest.Options{})
	p, err := redistest.NewProxy(s.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	r := newRig(t, s, p.Addr(), 6, 1<<20, Config{Workers: 1, RowsPerCall: 6})
	rows := names("put-killed", 6)
	r.fill(seq(0, 6)...)
	data := make([][]byte, 6)
	for i := range data {
		data[i] = bytes.Clone(r.slotBytes(i))
	}
	hold := p.HoldReplies(redistest.Command("SET", r.key(rows[3])))
	op := r.start(contract.PutDir, rows, seq(0, 6))
	ctx, cancel := bound(t, 30*time.Second, "a held reply").Context(t.Context())
	defer cancel()
	require.NoError(t, hold.Held(ctx))
	assert.Equal(t, contract.Open, op.Poll(nil).Access)
	p.DropAll()
	st := r.settle(op, seq(0, 6))
	hold.Release()
	assert.Equal(t, contract.Ended, st.Access)
	assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Ready, contract.Ready, contract.Fault, contract.Fault, contract.Fault}, st.Rows,
		"the replies before the held one came back")
	require.NoError(t, s.Kill())
	require.NoError(t, s.Restart(t.Context()))
	for i, n := range rows {
		if v, ok := s.object(t, r.key(n)); ok {
			assert.Equal(t, data[i], v, "row %d: a stored object is the row's data, never what the slot held after the access ended", i)
		}
	}
	r.sealsHold()
}

// The server frozen past the driver's call timeout: the round trip
// times out, the rows are Fault and the access ends; resumed, the server
// answers into a connection the client closed, and no slot byte changes
// after the access ended.
func TestFrozenPastTheDeadline(t *testing.T) {
	s := startServer(t, redistest.Options{})
	r := newRig(t, s, s.Addr(), 8, 1<<20, Config{Workers: 2, RowsPerCall: 2, CallTimeout: 400 * time.Millisecond})
	rows := names("frozen", 4)
	for i, n := range rows {
		s.seed(t, r.key(n), bytes.Repeat([]byte{byte(i + 1)}, 1<<20))
	}
	require.NoError(t, s.Freeze())
	get := r.start(contract.GetDir, rows, seq(0, 4))
	r.fill(4, 5, 6, 7)
	put := r.start(contract.PutDir, names("frozen-put", 4), seq(4, 4))
	gst := r.settle(get, seq(0, 4))
	pst := r.settle(put, seq(4, 4))
	assert.Equal(t, contract.Ended, gst.Access)
	assert.Equal(t, contract.Ended, pst.Access)
	assert.Equal(t, 4, statuses(gst, contract.Fault), "%v", gst.Rows)
	assert.Equal(t, 4, statuses(pst, contract.Fault), "%v", pst.Rows)
	require.NoError(t, s.Resume())
	// The server now executes what it had read and answers into closed
	// connections; give it time to, then look.
	ctx, cancel := patience.For(t).Context(t.Context())
	defer cancel()
	require.NoError(t, s.raw.Do(ctx, s.raw.B().Ping().Build()).Error())
	time.Sleep(200 * time.Millisecond)
	r.sealsHold()
	for i, n := range names("frozen-put", 4) {
		if v, ok := s.object(t, r.key(n)); ok {
			assert.NotEqual(t, r.marks[4+i], v, "row %d: the store holds what the slot held after the access ended", i)
		}
	}
}

// A get stalled in the middle of its value past the call timeout, then
// let go: the rest of the value never reaches the slot.
func TestStalledMidValuePastTheDeadline(t *testing.T) {
	s := startServer(t, redistest.Options{})
	p, err := redistest.NewProxy(s.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	r := newRig(t, s, p.Addr(), 1, 4<<20, Config{Workers: 1, CallTimeout: 400 * time.Millisecond})
	s.seed(t, r.key("stalled"), bytes.Repeat([]byte{3}, 4<<20))
	stall := p.StallReplies(redistest.Command("GET", r.key("stalled")), 1<<20)
	st := r.run(contract.GetDir, []string{"stalled"}, []int{0})
	assert.Equal(t, []contract.RowStatus{contract.Fault}, st.Rows)
	assert.Equal(t, contract.Ended, st.Access)
	stall.Release()
	time.Sleep(200 * time.Millisecond)
	r.sealsHold()
}

// A value longer than the row writes nothing, not a byte; a shorter one
// lands in the slot's head and is Fault; nothing outside the row is
// touched in either case.
func TestValueLengthAgainstTheRow(t *testing.T) {
	s := startServer(t, redistest.Options{})
	r := newRig(t, s, s.Addr(), 3, 64<<10, Config{})
	s.seed(t, r.key("long"), bytes.Repeat([]byte{1}, 64<<10+1))
	s.seed(t, r.key("short"), bytes.Repeat([]byte{2}, 1000))
	r.fill(0, 1, 2)
	before := bytes.Clone(r.mem)
	st := r.settle(r.start(contract.GetDir, []string{"long", "short"}, []int{1, 2}), nil)
	assert.Equal(t, []contract.RowStatus{contract.Fault, contract.Fault}, st.Rows)
	assert.Equal(t, contract.Ended, st.Access)
	assert.Equal(t, before[:2*r.slot], r.mem[:2*r.slot], "slot 0 (a neighbour) and slot 1 (the longer value's) are untouched")
	assert.Equal(t, bytes.Repeat([]byte{2}, 1000), r.mem[2*r.slot:2*r.slot+1000], "the shorter value's head")
	assert.Equal(t, before[2*r.slot+1000:], r.mem[2*r.slot+1000:], "past the shorter value, the slot is untouched")
}

// A second put of a key whose value has another length is Fault; of the
// same length Ready (a value stands whole under it); Absent reads Absent.
func TestPutOverAnExistingValue(t *testing.T) {
	s := startServer(t, redistest.Options{})
	r := newRig(t, s, s.Addr(), 2, 4096, Config{})
	s.seed(t, r.key("other-length"), []byte("short"))
	s.seed(t, r.key("same-length"), bytes.Repeat([]byte{5}, 4096))
	r.fill(0, 1)
	st := r.run(contract.PutDir, []string{"other-length", "same-length"}, []int{0, 1})
	assert.Equal(t, []contract.RowStatus{contract.Fault, contract.Ready}, st.Rows)
	v, _ := s.object(t, r.key("same-length"))
	assert.Equal(t, bytes.Repeat([]byte{5}, 4096), v, "SET NX never overwrites")
	assert.Equal(t, []contract.Presence{contract.Present, contract.Present, contract.Absent}, r.lookup(t.Context(), "other-length", "same-length", "never"))
}

// A key this driver is putting reads InFlight; the put's second admission
// is NotReady without a command; once the put is Ready the key is
// Present. A lookup held in the server answers Unknown when its context
// ends, and keeps Drain false and Close refused until it returns.
func TestLookupOwnPutsAndAbandonedProbes(t *testing.T) {
	s := startServer(t, redistest.Options{})
	p, err := redistest.NewProxy(s.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	r := newRig(t, s, p.Addr(), 2, 4096, Config{})
	r.fill(0, 1)
	hold := p.HoldReplies(redistest.Command("SET", r.key("mine")))
	op := r.start(contract.PutDir, []string{"mine"}, []int{0})
	ctx, cancel := bound(t, 30*time.Second, "a held reply").Context(t.Context())
	defer cancel()
	require.NoError(t, hold.Held(ctx))
	assert.Equal(t, []contract.Presence{contract.InFlight, contract.Absent}, r.lookup(t.Context(), "mine", "nobody"))
	sets := p.Seen(redistest.Command("SET"))
	second := r.run(contract.PutDir, []string{"mine"}, []int{1})
	assert.Equal(t, []contract.RowStatus{contract.NotReady}, second.Rows)
	assert.Equal(t, sets, p.Seen(redistest.Command("SET")), "the second put sent nothing")
	hold.Release()
	assert.Equal(t, []contract.RowStatus{contract.Ready}, r.settle(op, []int{0}).Rows)
	assert.Equal(t, []contract.Presence{contract.Present}, r.lookup(t.Context(), "mine"))

	held := p.HoldReplies(redistest.Command("EXISTS", r.key("mine")))
	lctx, lcancel := context.WithCancel(t.Context())
	answered := make(chan []contract.Presence, 1)
	go func() { answered <- r.lookup(lctx, "mine") }()
	require.NoError(t, held.Held(ctx))
	lcancel()
	select {
	case got := <-answered:
		assert.Equal(t, []contract.Presence{contract.Unknown}, got)
	case <-ctx.Done():
		t.Fatal("the lookup did not return once its context ended")
	}
	assert.Equal(t, int64(1), r.d.Stats().LookupsAbandoned)
	dctx, dcancel := context.WithTimeout(t.Context(), 100*time.Millisecond) // an input: Drain must give up
	assert.False(t, r.d.Drain(dctx), "an abandoned lookup is still inside the client")
	dcancel()
	require.NoError(t, r.d.Unregister(r.reg))
	assert.ErrorIs(t, r.d.Close(), contract.ErrDriverRejected)
	held.Release()
	assert.True(t, r.d.Drain(ctx))
	require.NoError(t, r.d.Close())
	r.closedUp = true
	_, err = r.d.Lookup(t.Context(), contract.LookupBatch{Keys: r.stem, Names: [][]byte{[]byte("mine")}}, nil)
	assert.ErrorIs(t, err, contract.ErrDriverRejected)
}

// OpenConfig connects from a store file, and a server that does not
// answer is an error naming the address.
func TestOpenConfig(t *testing.T) {
	s := startServer(t, redistest.Options{})
	sc, err := ParseStoreConfig("redis.toml", []byte("[redis]\naddress = \""+s.Addr()+"\"\n"))
	require.NoError(t, err)
	d, err := OpenConfig(t.Context(), sc, testLogger(t))
	require.NoError(t, err)
	assert.True(t, d.Drain(t.Context()))
	require.NoError(t, d.Close())

	sc.Redis.Address = "127.0.0.1:1"
	_, err = OpenConfig(t.Context(), sc, testLogger(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "127.0.0.1:1")
}

// A server restarted behind idle pooled connections: the first put and
// the first get after it are served, each sent again once on a fresh
// connection when the pooled one turns out dead before its first reply.
func TestFirstCallsAfterARestart(t *testing.T) {
	s := startServer(t, redistest.Options{})
	r := newRig(t, s, s.Addr(), 4, 4096, Config{Workers: 2})
	r.fill(0, 1)
	require.Equal(t, []contract.RowStatus{contract.Ready}, r.run(contract.PutDir, []string{"before"}, []int{0}).Rows)
	require.Equal(t, []contract.RowStatus{contract.Ready}, r.settle(r.start(contract.GetDir, []string{"before"}, []int{2}), nil).Rows,
		"both workers' connections are pooled now")
	require.NoError(t, s.Kill())
	require.NoError(t, s.Restart(t.Context()))
	assert.Equal(t, []contract.RowStatus{contract.Ready}, r.run(contract.PutDir, []string{"after"}, []int{1}).Rows)
	assert.Equal(t, []contract.RowStatus{contract.Miss}, r.settle(r.start(contract.GetDir, []string{"before"}, []int{3}), nil).Rows,
		"the restarted server is empty: no persistence")
	assert.Equal(t, []contract.Presence{contract.Absent, contract.Present}, r.lookup(t.Context(), "before", "after"))
}
