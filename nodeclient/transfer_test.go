package nodeclient_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/nodewire"
)

// fill writes a pattern of row name into slot.
func fill(slot []byte, name string) {
	for i := range slot {
		slot[i] = name[i%len(name)] ^ byte(i)
	}
}

// A publish moves the slots' bytes to the node under their names, a
// fetch brings them into other slots byte for byte, and a lookup says
// which names the node holds: every attempt quiesces.
func TestPublishFetchLookupRoundTrip(t *testing.T) {
	n := startFakeNode(t)
	c, s := dial(t, n)
	ctx := bounded(t)
	l, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: 300, SlotCount: 8, Regions: 2})
	require.NoError(t, err)

	names := []string{"blk-0", "blk-1", "blk-2"}
	pub := view(group(0, []int32{0, 1, 2}, names...), group(1, []int32{5, 6, 7}, "l1-0", "l1-1", "l1-2"))
	for _, g := range pub.Groups {
		for i, slot := range g.Slots {
			fill(l.Slot(g.Region, int(slot)), string(g.Names[i]))
		}
	}
	a, err := l.Publish(ctx, pub, nodeclient.TransferOptions{})
	require.NoError(t, err)
	f := s.next(ctx, nodewire.TypePublish).m.(*nodewire.Transfer)
	assert.Equal(t, l.ID(), f.Lend)
	assert.Zero(t, f.Deadline, "no deadline")
	assert.Equal(t, []nodewire.Group{
		{Region: 0, Slots: []uint32{0, 1, 2}, Names: pub.Groups[0].Names},
		{Region: 1, Slots: []uint32{5, 6, 7}, Names: pub.Groups[1].Names},
	}, f.Groups)
	o, err := a.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true, true, true, true, true}, o.Delivered)
	assert.NoError(t, o.Fault)
	require.True(t, patienceWait(t, a.Done()), "the publish quiesces")
	assert.True(t, a.Quiesced())

	lr, err := c.Lookup(ctx, view(group(0, nil, "blk-0", "blk-1", "nope", "blk-2")), nodeclient.LookupOptions{Every: true})
	require.NoError(t, err)
	assert.Equal(t, []contract.Presence{contract.Present, contract.Present, contract.Absent, contract.Present}, lr.Rows)
	assert.Equal(t, 2, lr.Bound)
	lk := s.next(ctx, nodewire.TypeLookup).m.(*nodewire.Lookup)
	assert.True(t, lk.Every)

	get := view(group(1, []int32{0, 1, 2, 3}, "blk-2", "blk-1", "blk-0", "nope"), group(0, []int32{7, 6, 5}, "l1-0", "l1-1", "l1-2"))
	a, err = l.Fetch(ctx, get, nodeclient.TransferOptions{})
	require.NoError(t, err)
	s.next(ctx, nodewire.TypeFetch)
	o, err = a.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Ready, contract.Ready, contract.Miss,
		contract.Ready, contract.Ready, contract.Ready}, o.Rows)
	assert.Equal(t, []bool{true, true, true, false, true, true, true}, o.Delivered)
	require.True(t, patienceWait(t, a.Done()))
	for _, g := range get.Groups {
		for i, slot := range g.Slots {
			name := string(g.Names[i])
			if name == "nope" {
				continue
			}
			want := make([]byte, 300)
			fill(want, name)
			assert.True(t, bytes.Equal(want, l.Slot(g.Region, int(slot))), "row %s in slot %d of region %d", name, slot, g.Region)
		}
	}
	require.NoError(t, l.Return(ctx))
}

// A view the node would refuse is refused by the client, naming the
// group and row, and nothing is sent.
func TestTransferRefusesBadViews(t *testing.T) {
	n := startFakeNode(t)
	c, s := dial(t, n)
	ctx := bounded(t)
	l, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: 64, SlotCount: 4, Regions: 2})
	require.NoError(t, err)
	long := make([]string, 65)
	for i := range long {
		long[i] = fmt.Sprint("n", i)
	}
	huge := strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		name string
		v    contract.View
		want error
		says string
	}{
		{"region past the lend", view(group(2, nil, "a")), nodewire.ErrOutOfRange, "group 0: region 2"},
		{"negative region", view(group(-1, nil, "a")), nodewire.ErrOutOfRange, "region -1"},
		{"slot past the region", view(group(0, nil, "a"), group(1, []int32{1, 4}, "b", "c")), nodewire.ErrOutOfRange, "group 1 row 1: slot 4"},
		{"negative slot", view(group(0, []int32{-1}, "a")), nodewire.ErrOutOfRange, "slot -1"},
		{"more slots than names", view(contract.Group{Slots: []int32{0, 1}, Names: [][]byte{[]byte("a")}}), nodewire.ErrBadNames, "2 slots and 1 names"},
		{"empty name", view(group(0, nil, "a", "")), nodewire.ErrBadNames, "group 0 row 1: an empty name"},
		{"more rows than max_rows", view(group(0, make([]int32, 65), long...)), nodewire.ErrLimit, "65 rows"},
		{"frame over max_frame", view(group(0, nil, huge)), nodewire.ErrLimit, "max_frame"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, dir := range []string{"publish", "fetch"} {
				submit := l.Publish
				if dir == "fetch" {
					submit = l.Fetch
				}
				a, err := submit(ctx, tc.v, nodeclient.TransferOptions{})
				assert.Nil(t, a)
				assert.ErrorIs(t, err, tc.want)
				assert.ErrorIs(t, err, contract.ErrInvalidSubmission)
				assert.ErrorContains(t, err, tc.says)
				assert.ErrorContains(t, err, dir)
			}
		})
	}
	// Nothing reached the node: the next frame it reads is the stats.
	_, err = c.Stats(ctx)
	require.NoError(t, err)
	for f := range s.seen {
		if f.h.Type == nodewire.TypeStats {
			break
		}
		assert.Contains(t, []nodewire.Type{nodewire.TypeHello, nodewire.TypeLend}, f.h.Type)
	}
	_, err = c.Lookup(ctx, view(group(0, nil, "a", "")), nodeclient.LookupOptions{})
	assert.ErrorIs(t, err, nodewire.ErrBadNames)
	_, err = c.Lookup(ctx, view(group(0, nil, long...)), nodeclient.LookupOptions{})
	assert.ErrorIs(t, err, nodewire.ErrLimit)

	require.NoError(t, l.Return(ctx))
	_, err = l.Publish(ctx, view(group(0, nil, "a")), nodeclient.TransferOptions{})
	assert.ErrorIs(t, err, nodewire.ErrUnknownLend, "a returned lend takes no transfer")
}

// A deadline travels as the time left; the node's forced outcome reads
// as its fault, matched with nodewire.ErrDeadline, with each row's
// status as the node gave it.
func TestDeadlineTravelsAndItsFaultMatches(t *testing.T) {
	n := startFakeNode(t)
	n.setHook(func(s *fakeSession, f got) bool {
		if f.h.Type != nodewire.TypePublish {
			return false
		}
		s.reply(f.h.Request, &nodewire.Accepted{})
		s.reply(f.h.Request, &nodewire.Outcome{Rows: []contract.RowStatus{contract.Ready, contract.Pending, contract.Cancelled},
			FaultCode: nodewire.CodeDeadline, Fault: "the deadline of 5s passed"})
		s.reply(f.h.Request, &nodewire.Quiesced{})
		return true
	})
	c, s := dial(t, n)
	ctx := bounded(t)
	l, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: 8, SlotCount: 4})
	require.NoError(t, err)
	const left = time.Hour
	sent := time.Now()
	a, err := l.Publish(ctx, view(group(0, nil, "a", "b", "c")), nodeclient.TransferOptions{Deadline: sent.Add(left)})
	require.NoError(t, err)
	f := s.next(ctx, nodewire.TypePublish).m.(*nodewire.Transfer)
	assert.Positive(t, f.Deadline)
	assert.LessOrEqual(t, f.Deadline, left)
	o, err := a.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, false}, o.Delivered)
	assert.Equal(t, []contract.RowStatus{contract.Ready, contract.Pending, contract.Cancelled}, o.Rows)
	assert.ErrorIs(t, o.Fault, nodewire.ErrDeadline)
	assert.ErrorContains(t, o.Fault, "the deadline of 5s passed")

	_, err = l.Publish(ctx, view(group(0, nil, "a", "b", "c")), nodeclient.TransferOptions{Deadline: sent.Add(-time.Second)})
	require.NoError(t, err)
	f = s.next(ctx, nodewire.TypePublish).m.(*nodewire.Transfer)
	assert.Equal(t, time.Duration(1), f.Deadline, "a deadline passed already travels as 1 ns, not as none")
}

// The node's refusal of a publish is a *nodewire.RefusedError matching
// its code's sentinel; no attempt is returned.
func TestTransferRefusedByTheNode(t *testing.T) {
	n := startFakeNode(t)
	n.setHook(func(s *fakeSession, f got) bool {
		if f.h.Type != nodewire.TypeFetch {
			return false
		}
		s.reply(f.h.Request, &nodewire.Refused{Code: nodewire.CodeLimitExceeded, Field: "engine.attempts", Message: "16 attempts in flight"})
		return true
	})
	c, _ := dial(t, n)
	ctx := bounded(t)
	l, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: 8, SlotCount: 4})
	require.NoError(t, err)
	a, err := l.Fetch(ctx, view(group(0, nil, "a")), nodeclient.TransferOptions{})
	assert.Nil(t, a)
	assert.ErrorIs(t, err, nodewire.ErrLimit)
	var r *nodewire.RefusedError
	require.True(t, errors.As(err, &r))
	assert.Equal(t, "engine.attempts", r.Field)
	require.NoError(t, l.Return(ctx), "a refused attempt holds nothing")
}

// A publish whose context ends before the node accepts it is returned
// with the error, and cancelled: the node sees the cancel, and the
// attempt quiesces when the node says so — its slots are reusable then,
// not before.
func TestPublishGivenUpBeforeAcceptedIsCancelledAndStillQuiesces(t *testing.T) {
	n := startFakeNode(t)
	ctx := bounded(t)
	short, cancel := context.WithCancel(ctx)
	held := make(chan got, 1)
	answer := make(chan struct{}) // closed once the test saw the attempt unquiesced
	release := sync.OnceFunc(func() { close(answer) })
	t.Cleanup(release) // before the fake stops, should the test end early
	n.setHook(func(s *fakeSession, f got) bool {
		switch f.h.Type {
		case nodewire.TypePublish:
			held <- f // no answer yet
			cancel()  // the publish reached the node: now the engine gives up on it
			return true
		case nodewire.TypeCancel:
			p := <-held
			<-answer
			s.reply(p.h.Request, &nodewire.Accepted{})
			s.reply(p.h.Request, &nodewire.Outcome{Rows: []contract.RowStatus{contract.Cancelled}})
			s.reply(p.h.Request, &nodewire.Quiesced{})
			return true
		}
		return false
	})
	c, s := dial(t, n)
	l, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: 8, SlotCount: 4})
	require.NoError(t, err)
	a, err := l.Publish(short, view(group(0, nil, "a")), nodeclient.TransferOptions{})
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, a, "the attempt comes back with the error")
	assert.False(t, a.Quiesced())
	release()
	f := s.next(ctx, nodewire.TypeCancel).m.(*nodewire.Cancel)
	assert.Equal(t, nodewire.Cancel{Attempt: requestOf(t, a)}, *f)
	require.True(t, patienceWait(t, a.Done()))
	o, _ := a.Outcome()
	assert.Equal(t, []contract.RowStatus{contract.Cancelled}, o.Rows)
}

// requestOf reads an attempt's request id from its name ("publish 7").
func requestOf(t *testing.T, a *nodeclient.Attempt) uint64 {
	var dir string
	var id uint64
	_, err := fmt.Sscanf(a.String(), "%s %d", &dir, &id)
	require.NoError(t, err)
	return id
}
