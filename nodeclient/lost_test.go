package nodeclient_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/nodewire"
)

// assertNeverQuiesces checks an attempt whose connection ended: Done is
// closed only at quiescence, and nothing can quiesce it any more.
func assertNeverQuiesces(t *testing.T, c *nodeclient.Client, a *nodeclient.Attempt) {
	t.Helper()
	<-c.Done() // every pending request was told; nothing more will come
	assert.False(t, a.Quiesced())
	select {
	case <-a.Done():
		t.Error("an attempt whose connection ended before quiescence quiesced")
	default:
	}
}

// The connection ends after the node accepted a publish and before its
// outcome: the outcome is forced (every row Pending, undelivered, the
// fault wrapping ErrClosed), the attempt never quiesces, and the client
// keeps the lend's memory mapped: its return cannot be answered.
func TestConnectionLostBeforeTheOutcome(t *testing.T) {
	n := startFakeNode(t)
	n.setHook(func(s *fakeSession, f got) bool {
		if f.h.Type != nodewire.TypePublish {
			return false
		}
		s.reply(f.h.Request, &nodewire.Accepted{})
		_ = s.conn.Close()
		return true
	})
	c, s := dial(t, n)
	ctx := bounded(t)
	l, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: 8, SlotCount: 4})
	require.NoError(t, err)
	ino := n.lastLend().inode
	a, err := l.Publish(ctx, view(group(0, nil, "a", "b")), nodeclient.TransferOptions{})
	require.NoError(t, err)
	o, err := a.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, []contract.RowStatus{contract.Pending, contract.Pending}, o.Rows)
	assert.Equal(t, []bool{false, false}, o.Delivered)
	assert.ErrorIs(t, o.Fault, nodeclient.ErrClosed)
	assertNeverQuiesces(t, c, a)
	assert.ErrorIs(t, c.Err(), nodeclient.ErrClosed)

	err = l.Return(ctx)
	assert.ErrorIs(t, err, nodeclient.ErrClosed)
	lends, bytes := c.Lent()
	assert.Equal(t, 1, lends, "the lend is kept")
	assert.Equal(t, l.Bytes(), bytes)
	s.ended(ctx)
	assert.Equal(t, 1, mappings(t, ino), "the node's side unmapped, the client still maps it")
	assert.NotPanics(t, func() { l.Slot(0, 3)[0] = 1 })
	assert.ErrorContains(t, l.Return(ctx), "stranded")
	_, err = l.Fetch(ctx, view(group(0, nil, "a")), nodeclient.TransferOptions{})
	assert.ErrorIs(t, err, nodewire.ErrUnknownLend)
}

// The node says goodbye and closes after an outcome and before
// quiescence: the outcome stands, the attempt never quiesces, and the
// client's error wraps the goodbye's code and says what the node holds.
func TestGoodbyeAfterTheOutcome(t *testing.T) {
	n := startFakeNode(t)
	n.setHook(func(s *fakeSession, f got) bool {
		if f.h.Type != nodewire.TypeFetch {
			return false
		}
		s.reply(f.h.Request, &nodewire.Accepted{})
		s.reply(f.h.Request, &nodewire.Outcome{Rows: []contract.RowStatus{contract.Miss}})
		s.reply(0, &nodewire.NodeGoodbye{Code: nodewire.CodeShuttingDown, Reason: "the node is stopping", HeldBytes: 4096, HeldLends: 1})
		_ = s.conn.Close()
		return true
	})
	c, _ := dial(t, n)
	ctx := bounded(t)
	l, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: 8, SlotCount: 4})
	require.NoError(t, err)
	a, err := l.Fetch(ctx, view(group(0, nil, "a")), nodeclient.TransferOptions{})
	require.NoError(t, err)
	o, err := a.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, []contract.RowStatus{contract.Miss}, o.Rows)
	assert.NoError(t, o.Fault)
	assertNeverQuiesces(t, c, a)
	err = c.Err()
	assert.ErrorIs(t, err, nodeclient.ErrClosed)
	assert.ErrorIs(t, err, nodewire.ErrShuttingDown)
	assert.ErrorContains(t, err, "the node is stopping")
	assert.ErrorContains(t, err, "4096 bytes of 1 lends")
}

// A return the node answers Held fails with ErrHeld naming the bytes,
// and keeps the memory mapped and counted; a return it refuses as busy
// leaves the lend lent and usable.
func TestReturnHeldKeepsTheMemoryAndBusyKeepsTheLend(t *testing.T) {
	n := startFakeNode(t)
	returns := 0
	n.setHook(func(s *fakeSession, f got) bool {
		if f.h.Type != nodewire.TypeReturn {
			return false
		}
		returns++
		switch returns {
		case 1:
			s.reply(f.h.Request, &nodewire.Refused{Code: nodewire.CodeBusy, Field: "return.lend", Message: "1 attempt in flight"})
		default:
			s.reply(f.h.Request, &nodewire.Held{Bytes: 4096})
		}
		return true
	})
	c, _ := dial(t, n)
	ctx := bounded(t)
	l, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: 8, SlotCount: 4})
	require.NoError(t, err)
	ino := n.lastLend().inode

	err = l.Return(ctx)
	assert.ErrorIs(t, err, nodewire.ErrBusy)
	a, err := l.Publish(ctx, view(group(0, nil, "a")), nodeclient.TransferOptions{})
	require.NoError(t, err, "a lend whose return was refused is still lent")
	require.True(t, patienceWait(t, a.Done()))

	err = l.Return(ctx)
	assert.ErrorIs(t, err, nodeclient.ErrHeld)
	assert.ErrorContains(t, err, "4096 bytes")
	lends, bytes := c.Lent()
	assert.Equal(t, 1, lends)
	assert.Equal(t, l.Bytes(), bytes)
	assert.Equal(t, 2, mappings(t, ino), "the node's mapping and the client's")
	assert.ErrorContains(t, l.Return(ctx), "held by the node")
	_, err = l.Publish(ctx, view(group(0, nil, "a")), nodeclient.TransferOptions{})
	assert.ErrorIs(t, err, nodewire.ErrUnknownLend, "a held lend takes no transfer")
}

// A lend whose caller gave up before the node answered is finished by
// the client: taken later, it is returned at once, and its memory freed
// when the node answers Returned.
func TestLendGivenUpIsReturnedWhenTaken(t *testing.T) {
	n := startFakeNode(t)
	ctx := bounded(t)
	short, cancel := context.WithCancel(ctx)
	lent := make(chan got, 1)
	n.setHook(func(s *fakeSession, f got) bool {
		if f.h.Type != nodewire.TypeLend {
			return false
		}
		lent <- f
		cancel() // the engine gives up before the answer
		return true
	})
	c, s := dial(t, n)
	_, err := c.Lend(short, nodeclient.Geometry{SlotBytes: 8, SlotCount: 4})
	require.ErrorIs(t, err, context.Canceled)
	lends, _ := c.Lent()
	assert.Equal(t, 1, lends, "kept while the node may have it")

	// Now the node takes it, late, and answers the return below.
	n.setHook(func(s *fakeSession, f got) bool { return f.h.Type == nodewire.TypeReturn })
	f := <-lent
	fl, err := mapLend(f.fd, *f.m.(*nodewire.Lend))
	require.NoError(t, err)
	s.reply(f.h.Request, &nodewire.Lent{Lend: 9, RegionStride: uint64(fl.stride)})
	r := s.next(ctx, nodewire.TypeReturn).m.(*nodewire.Return)
	assert.Equal(t, uint32(9), r.Lend, "the client returns what nobody waits for")
	assert.Equal(t, 2, mappings(t, fl.inode))
	require.NoError(t, unmap(fl))
	s.reply(s.lastRequest(), &nodewire.Returned{})
	_, err = c.Stats(ctx) // the reader handled Returned before the stats reply
	require.NoError(t, err)
	lends, _ = c.Lent()
	assert.Zero(t, lends)
	assert.Zero(t, mappings(t, fl.inode), "freed once the node returned it")
}

// A lend refused by the node, or by the client for its geometry, holds
// no memory afterwards.
func TestLendRefusalsHoldNothing(t *testing.T) {
	n := startFakeNode(t)
	n.setHook(func(s *fakeSession, f got) bool {
		if f.h.Type != nodewire.TypeLend {
			return false
		}
		s.reply(f.h.Request, &nodewire.Refused{Code: nodewire.CodeLimitExceeded, Field: "engine.lend_bytes"})
		return true
	})
	c, _ := dial(t, n)
	ctx := bounded(t)
	for _, tc := range []struct {
		name string
		g    nodeclient.Geometry
		want error
	}{
		{"refused by the node", nodeclient.Geometry{SlotBytes: 8, SlotCount: 4}, nodewire.ErrLimit},
		{"no slot bytes", nodeclient.Geometry{SlotCount: 4}, nodewire.ErrBadLend},
		{"no slots", nodeclient.Geometry{SlotBytes: 8}, nodewire.ErrBadLend},
		{"negative regions", nodeclient.Geometry{SlotBytes: 8, SlotCount: 4, Regions: -1}, nodewire.ErrBadLend},
		{"over max_lend_bytes", nodeclient.Geometry{SlotBytes: 1 << 20, SlotCount: 17}, nodewire.ErrLimit},
		{"overflow", nodeclient.Geometry{SlotBytes: 1 << 62, SlotCount: 4}, nodewire.ErrBadLend},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := c.Lend(ctx, tc.g)
			assert.Nil(t, l)
			assert.ErrorIs(t, err, tc.want)
			lends, bytes := c.Lent()
			assert.Zero(t, lends)
			assert.Zero(t, bytes)
		})
	}
}

// The connection ends after the lend's frame was sent and before the
// node answered: the node may map it, so the client keeps it.
func TestLendLostAfterSendingIsKept(t *testing.T) {
	n := startFakeNode(t)
	n.setHook(func(s *fakeSession, f got) bool {
		if f.h.Type == nodewire.TypeLend {
			_ = s.conn.Close()
			return true
		}
		return false
	})
	c, _ := dial(t, n)
	ctx := bounded(t)
	_, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: 8, SlotCount: 4})
	assert.ErrorIs(t, err, nodeclient.ErrClosed)
	lends, bytes := c.Lent()
	assert.Equal(t, 1, lends)
	assert.Equal(t, int64(4096), bytes)
}
