package memdrv_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/internal/testkeys"
)

// quiet is a logger for drivers whose tests provoke logged panics.
var quiet = slog.New(slog.DiscardHandler)

// fixture is one driver over a fresh store, with one registered region
// of small slots whose every byte starts as fillByte. When the test ends
// the region is revoked and its memory freed, both of which must
// succeed, unless the test called keep.
type fixture struct {
	t     *testing.T
	store *memdrv.Store
	d     *memdrv.Driver
	mem   *memdrv.Memory
	reg   contract.Registration
	kept  bool
}

const (
	slotBytes = 64
	slotCount = 8
	fillByte  = 0xAA
)

func newFixture(t *testing.T, o memdrv.Options) *fixture {
	t.Helper()
	if o.Logger == nil {
		o.Logger = quiet
	}
	s := memdrv.NewStore()
	d := memdrv.New(s, o)
	f := &fixture{t: t, store: s, d: d, mem: paint(t, slotBytes, slotCount, contract.Host)}
	var err error
	f.reg, err = d.Register(f.mem.Region)
	require.NoError(t, err)
	t.Cleanup(func() {
		if f.kept {
			assert.ErrorIs(t, f.mem.Free(), memdrv.ErrMemoryLent, "kept memory is not freed")
			return
		}
		require.NoError(t, d.Unregister(f.reg), "the fixture's region is revoked at the end")
		require.NoError(t, f.mem.Free(), "and its memory freed")
	})
	return f
}

// keep says the fixture's region stays lent for good (an unprovable
// operation pins it): the memory is not freed, and Free must refuse it.
func (f *fixture) keep() { f.kept = true }

// registrar is what register needs of a driver.
type registrar interface {
	Register(contract.SlotRegion) (contract.Registration, error)
	Unregister(contract.Registration) error
}

// register allocates a region and registers it with d. When the test
// ends the registration is revoked (a nil Unregister is required) and
// then the memory freed.
func register(t *testing.T, d registrar, sb int64, n int) (*memdrv.Memory, contract.Registration) {
	t.Helper()
	mem := alloc(t, sb, n, contract.Host)
	reg, err := d.Register(mem.Region)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Unregister(reg), "revoked at the end of the test") })
	return mem, reg
}

// alloc maps memory whose every byte is fillByte, and frees it when the
// test ends: by then nothing may cover it, so Free must succeed.
func alloc(t *testing.T, sb int64, n int, kind contract.MemoryKind) *memdrv.Memory {
	t.Helper()
	mem := paint(t, sb, n, kind)
	t.Cleanup(func() { require.NoError(t, mem.Free(), "memory freed at the end of the test") })
	return mem
}

// paint maps memory whose every byte is fillByte; the caller frees it.
func paint(t *testing.T, sb int64, n int, kind contract.MemoryKind) *memdrv.Memory {
	t.Helper()
	mem, err := memdrv.Alloc(sb, n, kind)
	require.NoError(t, err)
	for i := range mem.Bytes {
		mem.Bytes[i] = fillByte
	}
	return mem
}

// row is a row named name of one whole slot of the fixture's region.
// Under [plain] its store key is the name itself, so a test stages and
// reads the object of f.row(slot, "k") under the key "k".
func (f *fixture) row(slot int, name string) contract.Row {
	return contract.Row{Name: []byte(name), Spans: []contract.Span{f.mem.Region.Slot(slot)}}
}

// plain is the tests' key maker: a row's key is its name, as it is.
var plain = testkeys.Plain{}

// batch is a batch of rows under the key maker plain.
func batch(rows ...contract.Row) contract.RowBatch { return contract.RowBatch{Keys: plain, Rows: rows} }

// write fills slot with a pattern derived from seed, and returns it.
func (f *fixture) write(slot int, seed byte) []byte {
	b := f.mem.Slot(slot)
	for i := range b {
		b[i] = seed + byte(i)
	}
	return bytes.Clone(b)
}

func (f *fixture) put(rows ...contract.Row) contract.Operation {
	f.t.Helper()
	op, err := f.d.Put(batch(rows...), nil)
	require.NoError(f.t, err)
	return op
}

func (f *fixture) get(rows ...contract.Row) contract.Operation {
	f.t.Helper()
	op, err := f.d.Get(batch(rows...), nil, nil)
	require.NoError(f.t, err)
	return op
}

// untouched reports whether every byte of b still holds fillByte.
func untouched(b []byte) bool { return bytes.Count(b, []byte{fillByte}) == len(b) }

// outside returns the fixture's region bytes outside slot.
func (f *fixture) outside(slot int) []byte {
	lo, hi := int64(slot)*slotBytes, int64(slot+1)*slotBytes
	return append(bytes.Clone(f.mem.Bytes[:lo]), f.mem.Bytes[hi:]...)
}

// teardown drains the driver, revokes the fixture's region and closes
// the driver, requiring each step to succeed.
func (f *fixture) teardown() {
	f.t.Helper()
	require.True(f.t, f.d.Drain(context.Background()), "drain")
	require.NoError(f.t, f.d.Unregister(f.reg))
	require.NoError(f.t, f.d.Close())
}

// counter counts onChange calls.
type counter struct{ n atomic.Int64 }

func (c *counter) inc()       { c.n.Add(1) }
func (c *counter) get() int64 { return c.n.Load() }

// statuses builds a []RowStatus for comparisons.
func statuses(s ...contract.RowStatus) []contract.RowStatus { return s }
