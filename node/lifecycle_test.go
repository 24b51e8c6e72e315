package node

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/patience"
)

// giveUpAtOnce makes the node stop waiting for a lend's access to end as
// soon as it starts: what is still in the store's hands is kept. (The
// wait is an input here, not a bound on progress.)
func giveUpAtOnce(c *Config) { c.EngineWait = time.Millisecond }

// TestEngineGoneWithTransfersHeld: an engine whose connection ends
// while its publish is held inside the store leaves its lend with the
// node, which keeps the mapping (counted held) while other engines'
// round trips run, and unmaps it once the store lets the row go: the
// node's lent bytes return to the baseline.
func TestEngineGoneWithTransfersHeld(t *testing.T) {
	f := newFixture(t, giveUpAtOnce)
	base := f.node.Stats()
	require.Zero(t, base.LentBytes)

	e, _ := f.attach("doomed")
	id, mem := e.lend(4096, 4, 2)
	require.Equal(t, 2, mem.mappings(t), "the engine's mapping and the node's")
	held := names("doomed", 1)
	gate := f.store.HoldTransfers(memdrv.PutDir, f.key(held[0]))
	defer gate.Release()
	e.transfer(contract.PutDir, id, 1, []uint32{3}, held)
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	require.NoError(t, gate.Held(ctx))

	require.NoError(t, e.c.Close()) // as a killed engine's socket closes
	bytes := 2 * int64(nodewire.PageSize) * 4
	s := f.waitNode("the lend kept", func(s Stats) bool { return s.Engines == 0 && s.HeldLends == 1 })
	require.Equal(t, bytes, s.HeldBytes)
	require.Equal(t, bytes, s.LentBytes)
	require.EqualValues(t, 1, s.Lends)
	require.EqualValues(t, 1, s.AttemptsOpen, "the held publish has not quiesced")
	require.Equal(t, 2, mem.mappings(t), "the node keeps its mapping while the store holds the row")
	require.Len(t, f.node.Held(), 1, "the kept lend is named while it is held")

	f.roundTrip("beside-the-kept-lend")

	gate.Release()
	s = f.waitNode("the kept lend unmapped", func(s Stats) bool { return s.LentBytes == base.LentBytes })
	require.Zero(t, s.HeldLends)
	require.Zero(t, s.HeldBytes)
	require.Zero(t, s.Lends)
	require.Zero(t, s.AttemptsOpen)
	require.Equal(t, 1, mem.mappings(t), "only the engine's own mapping is left")
}

// TestReturn: a return answers Returned once the node unmapped the
// lend; a return while a publish is held inside the store forces its
// outcome and answers Held (the lend kept, counted), and the lend is
// unmapped once the store lets the row go, the attempt quiescing then.
func TestReturn(t *testing.T) {
	// The honest return waits as long as the node's default allows: it
	// must answer Returned.
	honest := newFixture(t, nil)
	e, _ := honest.attach("returner")
	id, mem := e.lend(1024, 4, 1)
	req := e.send(&nodewire.Return{Lend: id})
	expect[*nodewire.Returned](e, req)
	require.Equal(t, 1, mem.mappings(t), "unmapped by the node before it said returned")
	again := e.send(&nodewire.Return{Lend: id})
	e.expectRefused(again, nodewire.CodeUnknownLend, "return.lend")

	f := newFixture(t, giveUpAtOnce)
	e, _ = f.attach("returner")
	id, mem = e.lend(1024, 4, 1)
	held := names("returned", 1)
	gate := f.store.HoldTransfers(memdrv.PutDir, f.key(held[0]))
	defer gate.Release()
	pub := e.transfer(contract.PutDir, id, 0, []uint32{2}, held)
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	require.NoError(t, gate.Held(ctx))
	ret := e.send(&nodewire.Return{Lend: id})
	var outcome *nodewire.Outcome
	var heldReply *nodewire.Held
	for range 2 { // the forced outcome and the held answer, in either order
		h, m, err := e.read()
		require.NoError(t, err)
		switch m := m.(type) {
		case *nodewire.Outcome:
			require.Equal(t, pub, h.Request)
			outcome = m
		case *nodewire.Held:
			require.Equal(t, ret, h.Request)
			heldReply = m
		default:
			t.Fatalf("want the outcome and held, got %v %+v", h.Type, m)
		}
	}
	require.Equal(t, []contract.RowStatus{contract.Pending}, outcome.Rows, "handed to the store, no verdict when forced")
	require.Equal(t, nodewire.CodeStore, outcome.FaultCode)
	require.EqualValues(t, nodewire.PageSize, heldReply.Bytes)
	s := f.node.Stats()
	require.EqualValues(t, 1, s.HeldLends)
	require.Equal(t, 2, mem.mappings(t))
	req = e.send(&nodewire.Transfer{Dir: contract.PutDir, Lend: id, Groups: []nodewire.Group{{Slots: []uint32{0}, Names: names("after", 1)}}})
	e.expectRefused(req, nodewire.CodeUnknownLend, "publish.lend")

	gate.Release()
	expect[*nodewire.Quiesced](e, pub)
	f.waitNode("the returned lend unmapped", func(s Stats) bool { return s.LentBytes == 0 && s.HeldLends == 0 })
	require.Equal(t, 1, mem.mappings(t))
}

// TestDeadline: a publish whose deadline passes while its row is inside
// the store gets its outcome at the deadline (the row Pending, fault
// code Deadline) and quiesces only once the store lets the row go.
func TestDeadline(t *testing.T) {
	f := newFixture(t, nil)
	e, _ := f.attach("hurried")
	id, _ := e.lend(256, 2, 1)
	late := names("late", 1)
	gate := f.store.HoldTransfers(memdrv.PutDir, f.key(late[0]))
	defer gate.Release()
	req := e.send(&nodewire.Transfer{Dir: contract.PutDir, Lend: id, Deadline: 20 * time.Millisecond,
		Groups: []nodewire.Group{{Slots: []uint32{1}, Names: late}}})
	expect[*nodewire.Accepted](e, req)
	out := expect[*nodewire.Outcome](e, req)
	require.Equal(t, nodewire.CodeDeadline, out.FaultCode, "fault %q", out.Fault)
	require.Len(t, out.Rows, 1)
	if out.Rows[0] == contract.Pending { // the row reached the store before the deadline
		ctx, cancel := patience.For(t).Context(context.Background())
		defer cancel()
		require.NoError(t, gate.Held(ctx))
		require.EqualValues(t, 1, f.node.Stats().AttemptsOpen, "not quiesced while the store holds the row")
	} else {
		require.Equal(t, contract.Cancelled, out.Rows[0], "never handed over")
	}
	gate.Release()
	expect[*nodewire.Quiesced](e, req)
}

// TestCancel: a cancelled publish whose row no worker took ends
// Cancelled, then quiesces; a cancel of no attempt is ignored.
func TestCancel(t *testing.T) {
	f := newFixture(t, nil)
	e, _ := f.attach("canceller")
	id, _ := e.lend(256, 2, 1)
	resume := f.drv.Pause()
	defer resume()
	req := e.transfer(contract.PutDir, id, 0, []uint32{0, 1}, names("cancelled", 2))
	e.send(&nodewire.Cancel{Attempt: 999})
	e.send(&nodewire.Cancel{Attempt: req})
	out := e.settle(req)
	require.Equal(t, []contract.RowStatus{contract.Cancelled, contract.Cancelled}, out.Rows)
	resume()
	stats := e.send(&nodewire.Stats{})
	reply := expect[*nodewire.StatsReply](e, stats)
	require.EqualValues(t, 2, reply.Rows[contract.Cancelled])
	require.EqualValues(t, 1, reply.Attempts)
	require.Zero(t, reply.AttemptsOpen)
	require.EqualValues(t, 1, reply.Lends)
	require.EqualValues(t, nodewire.PageSize, reply.LentBytes)
	require.EqualValues(t, 1, reply.Engines)
}

// TestShutdownSaysGoodbye: Shutdown ends every session with a goodbye
// (ShuttingDown), gives every lend back, refuses later connections and
// returns nothing held.
func TestShutdownSaysGoodbye(t *testing.T) {
	f := newFixture(t, nil)
	a, _ := f.attach("a")
	_, mem := a.lend(512, 2, 1)
	b, _ := f.attach("b")
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	require.Empty(t, f.node.Shutdown(ctx))
	for _, e := range []*testEngine{a, b} {
		bye := e.expectGoodbye(nodewire.CodeShuttingDown)
		require.Zero(t, bye.HeldBytes)
		require.Zero(t, bye.HeldLends)
	}
	require.Equal(t, 1, mem.mappings(t))
	s := f.node.Stats()
	require.Zero(t, s.Engines)
	require.Zero(t, s.LentBytes)
	require.EqualValues(t, 2, s.Ended[nodewire.CodeShuttingDown])
}

// TestSlowReaderDisconnected: an engine that asks and never reads fills
// its queue and is disconnected (counted SlowReader) while another
// engine's round trip runs.
func TestSlowReaderDisconnected(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.OutQueue = 4 })
	steady, _ := f.attach("steady")
	e, _ := f.attach("deaf")
	ask := frame(nodewire.TypeStats, 0, 1, nil)
	var batch []byte
	for i := range 64 {
		batch = append(batch, ask...)
		batch[len(batch)-8] = byte(i + 1) // request ids 1…64
	}
	disconnected := false
	for range 1 << 16 { // far more replies than any socket buffer holds
		require.NoError(t, e.c.SetWriteDeadline(time.Now().Add(patience.Wait())))
		if _, err := e.c.Write(batch); err != nil {
			disconnected = true
			break
		}
	}
	require.True(t, disconnected, "the node never stopped taking requests from an engine that reads nothing")
	s := f.waitNode("the slow reader counted", func(s Stats) bool { return s.Ended[nodewire.CodeSlowReader] == 1 && s.Engines == 1 })
	require.Zero(t, s.Refused())
	require.EqualValues(t, 1, s.Engines, "the steady engine is still attached")
	req := steady.send(&nodewire.Stats{})
	expect[*nodewire.StatsReply](steady, req)
	f.roundTrip("after-the-slow-reader")
}

// TestPeerNotAllowed: a peer whose uid is not on the allow-list gets
// the node's goodbye (NotAllowed) before anything is read, and is
// counted.
func TestPeerNotAllowed(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.AllowUIDs = []uint32{uint32(os.Getuid() + 1)} })
	e := f.dial() // the node speaks first: it reads nothing of a peer it refuses
	bye := e.expectGoodbye(nodewire.CodeNotAllowed)
	require.Contains(t, bye.Reason, "peer.uid")
	s := f.waitNode("the refused peer counted", func(s Stats) bool { return s.PeersRefused == 1 })
	require.Zero(t, s.Engines)
	require.Zero(t, s.Attached)
}

// TestReclaimHeldForGood: a fetch the store gave up on (access
// unprovable) never quiesces; its engine's lend, left at the session's
// end, is kept for good — until Reclaim recycles the store's client
// through the lend's view, which unmaps it.
func TestReclaimHeldForGood(t *testing.T) {
	f := newFixture(t, giveUpAtOnce)
	pub, _ := f.attach("publisher")
	pid, _ := pub.lend(256, 1, 1)
	stray := names("stray", 1)
	require.Empty(t, pub.settle(pub.transfer(contract.PutDir, pid, 0, []uint32{0}, stray)).Fault)

	e, _ := f.attach("unlucky")
	id, mem := e.lend(256, 1, 1)
	f.drv.UnprovableGets(f.key(stray[0]))
	req := e.transfer(contract.GetDir, id, 0, []uint32{0}, stray)
	out := expect[*nodewire.Outcome](e, req)
	require.Equal(t, []contract.RowStatus{contract.Fault}, out.Rows)
	require.Equal(t, nodewire.CodeStore, out.FaultCode)
	require.NoError(t, e.c.Close())
	s := f.waitNode("the lend kept", func(s Stats) bool { return s.HeldLends == 1 && s.Engines == 1 })
	require.EqualValues(t, nodewire.PageSize, s.HeldBytes)
	require.Equal(t, 2, mem.mappings(t))

	f.roundTrip("beside-the-stray")

	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	got, err := f.node.Reclaim(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 256, got, "the stray fetch's slot")
	s = f.waitNode("the reclaimed lend unmapped", func(s Stats) bool { return s.HeldLends == 0 && s.LentBytes == int64(nodewire.PageSize) })
	require.EqualValues(t, 1, s.Reclaims)
	require.EqualValues(t, 256, s.BytesReclaimed)
	require.Equal(t, 1, mem.mappings(t))
}
