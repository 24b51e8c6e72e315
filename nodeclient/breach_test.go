package nodeclient_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/nodewire"
)

// A node that answers out of turn breaks the protocol: the client ends
// the connection with an error wrapping ErrClosed and
// nodewire.ErrProtocol, and the attempt's outcome is forced (never
// quiesced), as for any connection lost.
func TestNodeBreakingTheProtocolEndsTheConnection(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(s *fakeSession, req uint64)
	}{
		{"presence for a publish", func(s *fakeSession, req uint64) {
			s.reply(req, &nodewire.Accepted{})
			s.reply(req, &nodewire.Presence{Rows: []contract.Presence{contract.Present}, Bound: 1})
		}},
		{"outcome before accepted", func(s *fakeSession, req uint64) {
			s.reply(req, &nodewire.Outcome{Rows: []contract.RowStatus{contract.Ready, contract.Ready}})
		}},
		{"outcome of too few rows", func(s *fakeSession, req uint64) {
			s.reply(req, &nodewire.Accepted{})
			s.reply(req, &nodewire.Outcome{Rows: []contract.RowStatus{contract.Ready}})
		}},
		{"quiesced before the outcome", func(s *fakeSession, req uint64) {
			s.reply(req, &nodewire.Accepted{})
			s.reply(req, &nodewire.Quiesced{})
		}},
		{"accepted twice", func(s *fakeSession, req uint64) {
			s.reply(req, &nodewire.Accepted{})
			s.reply(req, &nodewire.Accepted{})
		}},
		{"refused after accepted", func(s *fakeSession, req uint64) {
			s.reply(req, &nodewire.Accepted{})
			s.reply(req, &nodewire.Refused{Code: nodewire.CodeStore})
		}},
		{"a reply to no request", func(s *fakeSession, req uint64) {
			s.reply(req, &nodewire.Accepted{})
			s.reply(req+100, &nodewire.Returned{})
		}},
		{"a frame only an engine sends", func(s *fakeSession, req uint64) {
			s.reply(req, &nodewire.Accepted{})
			s.reply(req, &nodewire.Stats{})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := startFakeNode(t)
			n.setHook(func(s *fakeSession, f got) bool {
				if f.h.Type != nodewire.TypePublish {
					return false
				}
				tc.answer(s, f.h.Request)
				return true
			})
			c, _ := dial(t, n)
			ctx := bounded(t)
			l, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: 8, SlotCount: 4})
			require.NoError(t, err)
			a, err := l.Publish(ctx, view(group(0, nil, "a", "b")), nodeclient.TransferOptions{})
			if a == nil {
				require.Error(t, err)
				assert.ErrorIs(t, err, nodewire.ErrProtocol)
				return
			}
			o, werr := a.Wait(ctx)
			require.NoError(t, werr)
			require.True(t, patienceWait(t, c.Done()))
			assert.ErrorIs(t, c.Err(), nodeclient.ErrClosed)
			assert.ErrorIs(t, c.Err(), nodewire.ErrProtocol)
			if o.Fault != nil {
				assert.ErrorIs(t, o.Fault, nodewire.ErrProtocol)
			}
			assertNeverQuiesces(t, c, a)
		})
	}
}

// A node that lays a lend out with another stride than the client's is
// refused, and the lend returned to it at once.
func TestLentWithAnotherStrideIsReturned(t *testing.T) {
	n := startFakeNode(t)
	n.setHook(func(s *fakeSession, f got) bool {
		if f.h.Type != nodewire.TypeLend {
			return false
		}
		l, err := mapLend(f.fd, *f.m.(*nodewire.Lend))
		if err == nil {
			s.lastID++
			s.lends[s.lastID] = l
		}
		s.reply(f.h.Request, &nodewire.Lent{Lend: s.lastID, RegionStride: 8192})
		return true
	})
	c, s := dial(t, n)
	ctx := bounded(t)
	l, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: 8, SlotCount: 4})
	assert.Nil(t, l)
	assert.ErrorIs(t, err, nodewire.ErrProtocol)
	assert.ErrorContains(t, err, "stride of 8192 bytes, the client's is 4096")
	r := s.next(ctx, nodewire.TypeReturn).m.(*nodewire.Return)
	assert.Equal(t, s.lastID, r.Lend)
	_, err = c.Stats(ctx)
	require.NoError(t, err)
	lends, _ := c.Lent()
	assert.Zero(t, lends, "freed once the node answered Returned")
}
