package mooncakedrv

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
)

// A publish and a fetch inside the store while its only provider is
// frozen (SIGSTOP, just before they are submitted, within the master's
// client_ttl, so the master still places and finds objects there): every
// transfer to it ends -800 once the client's TCP status frame times out
// (MC_TCP_STATUS_TIMEOUT_SEC, 3 s here), and the network may still touch
// the memory. So every row of both calls is Fault, their access
// Unprovable, and nothing is given back: neither attempt quiesces, the
// backend's Shutdown returns the attempts and the region as still held
// (at once: that can never change), the lender's hold is not released,
// the region stays registered and the driver refuses to close; nor does
// any of that change once the provider answers again. The memory is
// never unmapped (keptMemory), and the driver and its client are left
// alive for the life of the process.
//
// The pool is this test's own: a provider frozen past the master's
// client_ttl loses its objects, and nothing else runs on it.
func TestRealFrozenProvider(t *testing.T) {
	s := startRealStore(t, nil)
	const rows, slotBytes = 4, 64 << 10
	l := newRealLender(t, s, 3*rows, slotBytes, "kvshare-realpool/frozen", true)
	for i := range 3 * rows {
		l.mem.fill(i, byte(i))
	}
	stored, published, fetched := span(0, rows), span(rows, 2*rows), span(2*rows, 3*rows)
	a, err := l.be.Publish(view(0, stored...), nil)
	require.NoError(t, err)
	l.quiesced(a)
	o := l.outcome(a)
	require.NoError(t, o.Fault)
	require.Equal(t, rows, o.Prefix(), "the rows the fetch will read are stored")

	require.NoError(t, s.pool.Freeze())
	put, err := l.be.Publish(view(rows, published...), nil)
	require.NoError(t, err)
	get, err := l.be.Fetch(view(0, fetched...), nil)
	require.NoError(t, err)

	for _, at := range []contract.Attempt{put, get} {
		o := l.outcome(at)
		assert.Zero(t, o.Prefix(), "%v delivered rows from a frozen provider", at)
		assert.ErrorIs(t, o.Fault, binding.ErrRowFault, "%v", at)
		assert.False(t, at.Quiesced(), "%v quiesced, yet the transfer may still touch its slots", at)
	}
	ds := l.drv.Stats()
	assert.EqualValues(t, rows, ds.PutRows[contract.Fault], "put rows Fault")
	assert.EqualValues(t, rows, ds.GetRows[contract.Fault], "get rows Fault")
	assert.EqualValues(t, 2, ds.OpsUnprovable, "operations with access Unprovable")
	assert.EqualValues(t, 2*rows, ds.RowsUnprovable)
	bs := l.be.Stats()
	assert.EqualValues(t, 2, bs.CallsUnprovable)
	assert.EqualValues(t, 2*rows, bs.RowsLent, "the slots of both calls stay lent")

	ctx, cancel := bound(t, realWait, "Shutdown").Context(context.Background())
	defer cancel()
	held := l.be.Shutdown(ctx)
	assert.Equal(t, []string{fmt.Sprint(put), fmt.Sprint(get), "region 0"}, held,
		"Shutdown names what it cannot give back")
	assert.NoError(t, ctx.Err(), "Shutdown answered at once: what it holds can never change")
	assert.Zero(t, l.hold.n.Load(), "the lender's hold was released")
	select {
	case <-l.be.Closed():
		t.Error("the backend says it released everything")
	default:
	}
	for _, at := range []contract.Attempt{put, get} {
		assert.False(t, at.Quiesced(), "%v quiesced after Shutdown", at)
	}
	assert.EqualValues(t, 2*rows, l.be.Stats().RowsLent, "nothing was given back by Shutdown")
	err = l.drv.Close()
	assert.True(t, errors.Is(err, contract.ErrDriverRejected), "Close of a driver with unprovable access: %v", err)

	// The provider answering again changes nothing: the -800s proved
	// nothing about when the transfers end.
	require.NoError(t, s.pool.Resume())
	assert.Equal(t, held, l.be.Shutdown(ctx), "Shutdown after the provider came back")
	assert.Zero(t, l.hold.n.Load(), "the lender's hold was released")
	assert.False(t, l.drv.Drain(ctx), "Drain of a driver with unprovable access")
	t.Logf("kept for the life of the process: %d bytes of memory at %#x, its registration and the driver's client (driver stats %+v)",
		l.mem.region.Len, l.mem.region.Base, l.drv.Stats())
}
