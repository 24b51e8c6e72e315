package nodeclient_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/nodewire"
)

func dial(t *testing.T, n *fakeNode) (*nodeclient.Client, *fakeSession) {
	t.Helper()
	ctx := bounded(t)
	c, err := nodeclient.Dial(ctx, n.path, nodeclient.Options{Engine: "engine", Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c, n.session(ctx)
}

// A lend is a memfd sealed against shrinking, growing and further seals,
// of regions × stride bytes, that the client and the node map shared:
// what one writes into a slot, the other reads, at the layout's offset.
func TestLendSharesASealedMemfd(t *testing.T) {
	n := startFakeNode(t)
	type file struct {
		seals int
		size  int64
		err   error
	}
	files := make(chan file, 1)
	n.setHook(func(s *fakeSession, f got) bool {
		if f.h.Type == nodewire.TypeLend {
			var st unix.Stat_t
			errStat := unix.Fstat(f.fd, &st)
			seals, err := unix.FcntlInt(uintptr(f.fd), unix.F_GET_SEALS, 0)
			files <- file{seals, st.Size, errors.Join(err, errStat)}
		}
		return false
	})
	c, s := dial(t, n)
	ctx := bounded(t)
	g := nodeclient.Geometry{SlotBytes: 1000, SlotCount: 5, Regions: 3}
	l, err := c.Lend(ctx, g)
	require.NoError(t, err)
	f := s.next(ctx, nodewire.TypeLend)
	assert.Equal(t, nodewire.Lend{SlotBytes: 1000, SlotCount: 5, Regions: 3}, *f.m.(*nodewire.Lend))

	fd := <-files
	require.NoError(t, fd.err)
	seals, size := fd.seals, fd.size
	assert.Equal(t, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL, seals)
	assert.Equal(t, int64(3*8192), size, "5000 bytes a region, rounded up to 8192")
	assert.Equal(t, int64(8192), l.Stride())
	assert.Equal(t, size, l.Bytes())
	assert.Equal(t, g, l.Geometry())
	assert.NotZero(t, l.ID())
	lends, lent := c.Lent()
	assert.Equal(t, 1, lends)
	assert.Equal(t, size, lent)
	st, err := c.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), st.Lends, "the node's counters, as the stand-in counts them")

	fl := n.lastLend()
	ino := fl.inode
	assert.Equal(t, 2, mappings(t, ino), "the client's mapping and the node's")
	slot := l.Slot(2, 4)
	require.Len(t, slot, 1000)
	assert.Equal(t, 1000, cap(slot), "a slot cannot be grown into its neighbour")
	copy(slot, bytes.Repeat([]byte{0xA5}, 1000))
	// The fake maps the same file: read what the client wrote there.
	off := 2*8192 + 4*1000
	assert.Equal(t, bytes.Repeat([]byte{0xA5}, 1000), fl.mem[off:off+1000])
	fl.mem[0] = 7
	assert.Equal(t, byte(7), l.Slot(0, 0)[0])

	require.NoError(t, l.Return(ctx))
	assert.Zero(t, mappings(t, ino), "both mappings gone once returned")
	lends, lent = c.Lent()
	assert.Zero(t, lends)
	assert.Zero(t, lent)
	assert.Panics(t, func() { l.Slot(0, 0) }, "a returned lend has no slots")
	assert.ErrorIs(t, l.Return(ctx), nodewire.ErrUnknownLend)
}
