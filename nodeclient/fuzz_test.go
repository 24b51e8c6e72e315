package nodeclient_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/nodewire"
)

// FuzzNodeBytes sends the client any bytes as the node's replies to an
// accepted publish, then closes: the client never panics, ends with
// ErrClosed, and the attempt has an outcome (the node's, if it sent a
// well-formed one, else forced) and quiesces only if the node said so
// after its own outcome (one of Pending rows included: a deadline's).
func FuzzNodeBytes(f *testing.F) {
	frame := func(req uint64, ms ...nodewire.Message) []byte {
		var b []byte
		for _, m := range ms {
			var err error
			b, err = nodewire.AppendFrame(b, req, m)
			require.NoError(f, err)
		}
		return b
	}
	const req = 3 // hello 1, lend 2, publish 3
	f.Add(frame(req, &nodewire.Outcome{Rows: []contract.RowStatus{contract.Ready}}, &nodewire.Quiesced{}))
	f.Add(frame(req, &nodewire.Outcome{Rows: []contract.RowStatus{contract.Fault}, FaultCode: nodewire.CodeStore, Fault: "x"}))
	f.Add(frame(0, &nodewire.NodeGoodbye{Code: nodewire.CodeSlowReader, Reason: "slow"}))
	f.Add(frame(req, &nodewire.Quiesced{}))
	f.Add(frame(req, &nodewire.Presence{Rows: []contract.Presence{contract.Present}, Bound: 1}))
	f.Add(frame(req+1, &nodewire.Returned{}))
	f.Add([]byte{1, 0, 0, 0, 0x84, 0, 0, 0, req, 0, 0, 0, 0, 0, 0, 0, 9})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		n := startFakeNode(t)
		n.setHook(func(s *fakeSession, f got) bool {
			if f.h.Type != nodewire.TypePublish {
				return false
			}
			s.reply(f.h.Request, &nodewire.Accepted{})
			_, _ = s.conn.UnixConn().Write(data)
			_ = s.conn.Close()
			return true
		})
		c, _ := dial(t, n)
		ctx := bounded(t)
		l, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: 8, SlotCount: 4})
		require.NoError(t, err)
		a, err := l.Publish(ctx, view(group(0, nil, "a")), nodeclient.TransferOptions{})
		require.NoError(t, err)
		require.True(t, patienceWait(t, c.Done()))
		assert.ErrorIs(t, c.Err(), nodeclient.ErrClosed)
		o, ok := a.Outcome()
		require.True(t, ok, "every attempt has an outcome once the connection ended")
		assert.Len(t, o.Rows, 1)
		assert.Len(t, o.Delivered, 1)
		if a.Quiesced() {
			assert.NotErrorIs(t, o.Fault, nodeclient.ErrClosed, "an outcome forced by the end of the connection never quiesces")
		}
	})
}
