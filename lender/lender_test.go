package lender_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/lender"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/patience"
)

// The tests of this package do not run in parallel: each compares
// hostmem.Totals before and after.

const slotBytes, slots = 4096, 8

func geometry() hostmem.Geometry { return hostmem.Geometry{SlotBytes: slotBytes, SlotCount: slots} }

// bounded is a context bounded by the test's one wait setting.
func bounded(t *testing.T, what string) context.Context {
	t.Helper()
	ctx, cancel := patience.Bound{Span: patience.Wait(), What: what, Logf: t.Logf}.Context(t.Context())
	t.Cleanup(cancel)
	return ctx
}

// watched is a driver seen only as a contract.Driver (no lookup, no
// recycle), counting its Drains and Closes.
type watched struct {
	contract.Driver
	drains, closes atomic.Int32
}

func (w *watched) Drain(ctx context.Context) bool { w.drains.Add(1); return w.Driver.Drain(ctx) }
func (w *watched) Close() error {
	err := w.Driver.Close()
	if err == nil {
		w.closes.Add(1)
	}
	return err
}

// view is one group of n rows in region 0, slots 0..n-1, named by tag.
func view(tag string, n int) contract.View {
	g := contract.Group{}
	for i := range n {
		g.Slots = append(g.Slots, int32(i))
		g.Names = append(g.Names, fmt.Appendf(nil, "%s/%d", tag, i))
	}
	return contract.View{Groups: []contract.Group{g}}
}

func TestLendPublishLookUpFetchClose(t *testing.T) {
	ctx := bounded(t, "the round trip")
	before := hostmem.Totals().MappedNow
	store := memdrv.NewStore()
	cfg := lender.Options{Geometry: geometry(), Backend: binding.Config{KeyPrefix: "test"}}
	pub, err := lender.Lend(ctx, memdrv.New(store, memdrv.Options{}), cfg)
	require.NoError(t, err)
	fet, err := lender.Open(ctx, func(context.Context) (contract.Driver, error) {
		return memdrv.New(store, memdrv.Options{}), nil
	}, cfg)
	require.NoError(t, err)

	v := view("req", slots)
	for i := range 5 {
		copy(pub.Slot(0, i), fmt.Sprintf("block %d", i))
	}
	a, err := pub.Publish(v.Cut(5), nil)
	require.NoError(t, err)
	out, err := contract.Settle(ctx, a)
	require.NoError(t, err)
	assert.Equal(t, 5, out.Count(contract.Ready))

	found, err := fet.Lookup(ctx, v, binding.LookupOptions{})
	require.NoError(t, err)
	require.Equal(t, 5, found.Bound)
	assert.Equal(t, 5, found.Count(contract.Present))
	a, err = fet.Fetch(v.Cut(found.Bound), nil)
	require.NoError(t, err)
	out, err = contract.Settle(ctx, a)
	require.NoError(t, err)
	require.Equal(t, 5, out.Count(contract.Ready))
	for i := range 5 {
		assert.True(t, bytes.Equal(pub.Slot(0, i), fet.Slot(0, i)), "slot %d", i)
	}
	assert.Equal(t, 3, v.Rest(found.Bound).Rows(), "the rows left to compute")

	require.NoError(t, pub.Close(ctx))
	require.NoError(t, fet.Close(ctx))
	require.NoError(t, pub.Close(ctx), "a second Close does nothing")
	assert.Equal(t, before, hostmem.Totals().MappedNow, "both lenders' memory is unmapped")
}

// Every refusal of Lend gives everything back: the driver drained and
// closed, the memory unmapped.
func TestLendRefusalsGiveEverythingBack(t *testing.T) {
	rejected := fmt.Errorf("%w: the store refused the region", contract.ErrDriverRejected)
	live := &contract.RegistrationError{Registration: 1, Err: errors.New("timed out after the store took the region")}
	for _, c := range []struct {
		name  string
		o     lender.Options
		stage error // the driver's next registration fails with it
		want  error
	}{
		{"slot size 0", lender.Options{Geometry: hostmem.Geometry{SlotCount: 4}}, nil, hostmem.ErrGeometry},
		{"no slots", lender.Options{Geometry: hostmem.Geometry{SlotBytes: 64}}, nil, hostmem.ErrGeometry},
		{"negative regions", lender.Options{Geometry: hostmem.Geometry{SlotBytes: 64, SlotCount: 1, Regions: -1}}, nil, hostmem.ErrGeometry},
		{"key prefix ending in /", lender.Options{Geometry: geometry(), Backend: binding.Config{KeyPrefix: "kv/"}}, nil, binding.ErrConfig},
		{"negative cap", lender.Options{Geometry: geometry(), Backend: binding.Config{MaxRowsPerCall: -1}}, nil, binding.ErrConfig},
		{"registration refused", lender.Options{Geometry: geometry()}, rejected, contract.ErrConstructionRejected},
		{"registration that may be live, revoked", lender.Options{Geometry: geometry()}, live, binding.ErrRegistrationMayBeLive},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := hostmem.Totals().MappedNow
			md := memdrv.New(memdrv.NewStore(), memdrv.Options{})
			if c.stage != nil {
				md.FailNextRegister(c.stage)
			}
			d := &watched{Driver: md}
			l, err := lender.Lend(bounded(t, "a refused Lend"), d, c.o)
			require.ErrorIs(t, err, c.want)
			assert.Nil(t, l)
			assert.NotErrorIs(t, err, lender.ErrKept)
			assert.Equal(t, int32(1), d.closes.Load(), "the driver is closed")
			assert.Equal(t, before, hostmem.Totals().MappedNow, "the memory is unmapped")
		})
	}
}

// A registration that may be live and can never be revoked keeps the
// memory mapped, and Lend says so.
func TestLendKeepsWhatMayBeRegistered(t *testing.T) {
	before := hostmem.Totals().MappedNow
	md := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	md.FailNextRegister(errors.New("the store answered something no one can read"))
	l, err := lender.Lend(bounded(t, "a kept Lend"), md, lender.Options{Geometry: geometry()})
	assert.Nil(t, l)
	var kept *lender.Kept
	require.ErrorAs(t, err, &kept)
	require.ErrorIs(t, err, lender.ErrKept)
	require.ErrorIs(t, err, binding.ErrRegistrationMayBeLive)
	assert.Equal(t, []string{"region 0 (no handle)"}, kept.Held)
	assert.Equal(t, int64(slotBytes*slots), kept.Mapped)
	assert.Equal(t, before+kept.Mapped, hostmem.Totals().MappedNow, "the memory stays mapped")
}

func TestOpenGivesBackWhatItMapped(t *testing.T) {
	before := hostmem.Totals().MappedNow
	opened := 0
	_, err := lender.Open(t.Context(), func(context.Context) (contract.Driver, error) {
		opened++
		return nil, nil
	}, lender.Options{Geometry: hostmem.Geometry{}})
	require.ErrorIs(t, err, hostmem.ErrGeometry)
	assert.Zero(t, opened, "a geometry refused opens no store client")

	boom := errors.New("no store at that address")
	_, err = lender.Open(t.Context(), func(context.Context) (contract.Driver, error) { return nil, boom }, lender.Options{Geometry: geometry()})
	require.ErrorIs(t, err, boom)
	assert.Equal(t, before, hostmem.Totals().MappedNow)

	_, err = lender.Open(t.Context(), func(context.Context) (contract.Driver, error) { return nil, nil }, lender.Options{Geometry: geometry()})
	require.ErrorIs(t, err, lender.ErrNoDriver)
	assert.Equal(t, before, hostmem.Totals().MappedNow)

	_, err = lender.Open(t.Context(), nil, lender.Options{Geometry: geometry()})
	require.ErrorIs(t, err, lender.ErrNoDriver)
	_, err = lender.Lend(t.Context(), nil, lender.Options{Geometry: geometry()})
	require.ErrorIs(t, err, lender.ErrNoDriver)
	assert.Equal(t, before, hostmem.Totals().MappedNow)
}
