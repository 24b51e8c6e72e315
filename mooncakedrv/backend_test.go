package mooncakedrv

import (
	"context"
	"encoding/binary"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
	"github.com/kvshare/kvshare/patience"
)

// hold counts the lender's releases.
type hold struct{ n atomic.Int32 }

func (h *hold) Release() { h.n.Add(1) }

// A round trip through binding.Backend: one lender publishes, another
// fetches, every byte checked, and the owner's cleanup order gives both
// regions back and destroys both clients.
func TestBackendRoundTripOverTheFake(t *testing.T) {
	store := fakesdk.New(fakesdk.Options{})
	const rows = 40
	type lender struct {
		mem  *memory
		hold *hold
		drv  *Driver
		be   *binding.Backend
	}
	newLender := func() *lender {
		d, err := New(store.Client(), Config{RowsPerCall: 8, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		l := &lender{mem: newMemory(t, rows, slotBytes), hold: &hold{}, drv: d}
		r, err := binding.Bind(d, []contract.SlotRegion{l.mem.region}, l.hold)
		require.NoError(t, err)
		l.be, err = binding.New(r, binding.Config{KeyPrefix: "roundtrip", MaxRowsPerCall: 16, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		return l
	}
	src, dst := newLender(), newLender()
	view := contract.View{Groups: []contract.Group{{Slots: make([]int32, rows), Names: make([][]byte, rows)}}}
	for i := range rows {
		src.mem.fill(i, byte(i))
		view.Groups[0].Slots[i] = int32(i)
		view.Groups[0].Names[i] = binary.BigEndian.AppendUint64(nil, uint64(i)*0x9e3779b97f4a7c15)
	}
	wait := func(a contract.Attempt) contract.Outcome {
		if !patience.For(t).Wait(a.Done()) {
			t.Fatal("the attempt did not quiesce")
		}
		o, ok := a.Outcome()
		require.True(t, ok)
		return o
	}
	a, err := src.be.Publish(view, nil)
	require.NoError(t, err)
	o := wait(a)
	require.NoError(t, o.Fault)
	assert.Equal(t, rows, o.Prefix())

	// Fetch in reverse slot order, so no slot matches by accident.
	rev := contract.View{Groups: []contract.Group{{Slots: make([]int32, rows), Names: view.Groups[0].Names}}}
	for i := range rows {
		rev.Groups[0].Slots[i] = int32(rows - 1 - i)
	}
	a, err = dst.be.Fetch(rev, nil)
	require.NoError(t, err)
	o = wait(a)
	require.NoError(t, o.Fault)
	assert.Equal(t, rows, o.Prefix())
	for i := range rows {
		assert.Equal(t, src.mem.slot(i), dst.mem.slot(rows-1-i), "row %d", i)
	}

	for _, l := range []*lender{src, dst} {
		s := l.be.Stats()
		assert.Zero(t, s.RowsLent)
		ctx, cancel := patience.For(t).Context(context.Background())
		assert.Nil(t, l.be.Shutdown(ctx), "nothing held")
		cancel()
		assert.EqualValues(t, 1, l.hold.n.Load())
		require.NoError(t, l.drv.Close())
	}
	assert.Equal(t, 2, store.Calls().Destroy)
	assert.Equal(t, 2, store.Calls().Unregister)
}
