package node

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/patience"
)

// strayFetch has engine e lend one slot and fetch name into it, a fetch
// the store gives up on (access Unprovable): its outcome is a Fault and
// it never quiesces. It returns the lend's memory and the request.
func (f *fixture) strayFetch(e *testEngine, name []byte) (*memfd, uint64) {
	f.t.Helper()
	id, mem := e.lend(256, 1, 1)
	f.drv.UnprovableGets(f.key(name))
	req := e.transfer(contract.GetDir, id, 0, []uint32{0}, [][]byte{name})
	out := expect[*nodewire.Outcome](e, req)
	require.Equal(f.t, []contract.RowStatus{contract.Fault}, out.Rows)
	return mem, req
}

// publish puts names from a lend of its own of pub's, every row Ready.
func (f *fixture) publish(pub *testEngine, ns [][]byte) {
	f.t.Helper()
	id, _ := pub.lend(256, len(ns), 1)
	out := pub.settle(pub.transfer(contract.PutDir, id, 0, seq(len(ns)), ns))
	require.Empty(f.t, out.Fault)
}

// engineStats is the named engine's counts.
func engineStats(t *testing.T, s Stats, name string) EngineStats {
	t.Helper()
	return named(t, s.PerEngine, name, func(es EngineStats) string { return es.Engine })
}

// named returns the item of list whose name is name.
func named[T any](t *testing.T, list []T, name string, nameOf func(T) string) T {
	t.Helper()
	for _, v := range list {
		if nameOf(v) == name {
			return v
		}
	}
	t.Fatalf("no %q in %+v", name, list)
	var zero T
	return zero
}

// TestReclaimAcrossEngines: two engines' lends held by unprovable
// fetches (one engine gone, its lend kept; one still attached) are won
// back by ONE recycle of the store client, each lend's reclaim then
// finding its calls ended without recycling again. While the recycle
// waits for a row inside the store, a third engine's lend, fetch and
// lookup are refused Busy (counted), its row no worker had taken ends
// Cancelled and its attempts are counted disturbed; afterwards all of
// it works again.
func TestReclaimAcrossEngines(t *testing.T) {
	f := newFixture(t, giveUpAtOnce)
	pub, _ := f.attach("publisher")
	strays := names("stray", 2)
	queuedName, heldName := names("queued", 1), names("held", 1)
	f.publish(pub, append(append(append([][]byte{}, strays...), queuedName...), heldName...))

	gone, _ := f.attach("gone")
	goneMem, _ := f.strayFetch(gone, strays[0])
	require.NoError(t, gone.c.Close())
	alive, _ := f.attach("alive")
	_, aliveReq := f.strayFetch(alive, strays[1])
	f.waitNode("the gone engine's lend kept", func(s Stats) bool { return s.HeldLends == 1 && s.Engines == 2 })
	require.Equal(t, 2, goneMem.mappings(t))

	// The bystander: a fetch held inside the store (the recycle waits for
	// it), then one no worker takes (the recycle cancels it).
	by, _ := f.attach("bystander")
	byLend, _ := by.lend(256, 2, 1)
	gate := f.drv.HoldKeys(contract.GetDir, f.key(heldName[0]))
	heldReq := by.transfer(contract.GetDir, byLend, 0, []uint32{0}, heldName)
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	require.NoError(t, gate.Held(ctx))
	waiting, _ := f.attach("waiting")
	waitingLend, _ := waiting.lend(256, 1, 1)
	resume := f.drv.Pause()
	queuedReq := by.transfer(contract.GetDir, byLend, 0, []uint32{1}, queuedName)

	recyclesBefore := f.drv.Recycles()
	closed := make(chan struct{})
	f.node.gateClosed = func() { close(closed) }
	type answer struct {
		bytes int64
		err   error
	}
	reclaimed := make(chan answer, 1)
	go func() {
		b, err := f.node.Reclaim(ctx)
		reclaimed <- answer{b, err}
	}()
	require.True(t, patience.For(t).Wait(closed), "the reclaim closed its gate")

	// While it runs: every new piece of work is refused Busy.
	late, _ := f.attach("late")
	m := newMemfd(t, 256, 1, 1, 0, unix.F_SEAL_SHRINK)
	late.expectRefused(late.sendFD(m.lendMsg(), m.fd), nodewire.CodeBusy, "lend")
	late.expectRefused(late.send(&nodewire.Lookup{Groups: [][][]byte{heldName}}), nodewire.CodeBusy, "lookup")
	waiting.expectRefused(waiting.send(&nodewire.Transfer{Dir: contract.GetDir, Lend: waitingLend, Groups: []nodewire.Group{{Slots: []uint32{0}, Names: heldName}}}), nodewire.CodeBusy, "fetch")

	gate.Release()
	outs := by.settleAll(heldReq, queuedReq)
	resume()
	got := <-reclaimed
	require.NoError(t, got.err)
	assert.EqualValues(t, 512, got.bytes, "both stray fetches' slots")
	assert.Equal(t, recyclesBefore+1, f.drv.Recycles(), "one recycle for every engine: the lends' reclaims coalesced with it")
	assert.Equal(t, []contract.RowStatus{contract.Ready}, outs[heldReq].Rows, "the row inside the store keeps the store's verdict")
	assert.Equal(t, []contract.RowStatus{contract.Cancelled}, outs[queuedReq].Rows, "the row no worker took")

	expect[*nodewire.Quiesced](alive, aliveReq) // its slot is the engine's again
	s := f.waitNode("the gone engine's lend unmapped", func(s Stats) bool { return s.HeldLends == 0 && s.Lends == 4 })
	require.Equal(t, 1, goneMem.mappings(t))
	assert.EqualValues(t, 1, s.Reclaims)
	assert.EqualValues(t, 512, s.BytesReclaimed)
	assert.EqualValues(t, 3, s.ReclaimRefused)
	assert.EqualValues(t, 2, s.ReclaimDisturbed, "the bystander's two fetches")
	assert.EqualValues(t, 1, s.ReclaimCancelledRows)
	assert.EqualValues(t, 2, engineStats(t, s, "late").ReclaimRefused)
	assert.EqualValues(t, 2, engineStats(t, s, "late").Refusals[nodewire.CodeBusy])
	assert.EqualValues(t, 1, engineStats(t, s, "waiting").ReclaimRefused)
	bs := engineStats(t, s, "bystander")
	assert.Zero(t, bs.ReclaimRefused)
	assert.EqualValues(t, 2, bs.ReclaimDisturbed)
	assert.EqualValues(t, 1, bs.ReclaimCancelledRows)
	assert.Zero(t, engineStats(t, s, "alive").ReclaimDisturbed, "its fetch's outcome was known before")

	// The gate is open again: the same requests go through.
	out := waiting.settle(waiting.transfer(contract.GetDir, waitingLend, 0, []uint32{0}, heldName))
	assert.Equal(t, []contract.RowStatus{contract.Ready}, out.Rows)
	out = by.settle(by.transfer(contract.GetDir, byLend, 0, []uint32{1}, queuedName))
	assert.Equal(t, []contract.RowStatus{contract.Ready}, out.Rows)
	late.lend(256, 1, 1)
	f.roundTrip("after-the-reclaim")

	// Nothing unprovable left: a reclaim recycles nothing.
	b, err := f.node.Reclaim(ctx)
	require.NoError(t, err)
	assert.Zero(t, b)
	assert.Equal(t, recyclesBefore+1, f.drv.Recycles())
}

// TestReclaimAbove: the node reclaims on its own once the bytes of the
// lends it keeps reach Config.ReclaimAbove — not before: one kept lend
// below the mark stays held, the second reaching it has both won back
// by one recycle.
func TestReclaimAbove(t *testing.T) {
	f := newFixture(t, func(c *Config) {
		giveUpAtOnce(c)
		c.ReclaimAbove = 2 * nodewire.PageSize
	})
	pub, _ := f.attach("publisher")
	strays := names("stray", 2)
	f.publish(pub, strays)

	first, _ := f.attach("first")
	firstMem, _ := f.strayFetch(first, strays[0])
	require.NoError(t, first.c.Close())
	f.waitNode("the first lend kept", func(s Stats) bool { return s.HeldLends == 1 && s.Engines == 1 })

	second, _ := f.attach("second")
	secondMem, _ := f.strayFetch(second, strays[1])
	require.NoError(t, second.c.Close())
	s := f.waitNode("both kept lends won back", func(s Stats) bool {
		return s.Engines == 1 && s.HeldLends == 0 && s.Reclaims == 1
	})
	assert.EqualValues(t, 512, s.BytesReclaimed)
	assert.Equal(t, 1, f.drv.Recycles(), "one recycle, once the mark was reached")
	assert.Equal(t, 1, firstMem.mappings(t))
	assert.Equal(t, 1, secondMem.mappings(t))
}
