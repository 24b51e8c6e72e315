package broken_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/broken"
)

// The edges of the rules' triggers: just where a rule stops acting, its
// driver does what memdrv does, and a deviation that writes memory never
// leaves the regions the driver holds.

// lentHead is a broken driver over a region that covers only the first
// slot of two: the second slot is the lender's own memory, next to the
// region and never lent, so a write past the region shows there.
type lentHead struct {
	d     *broken.Driver
	store *memdrv.Store
	mem   *memdrv.Memory
	row   contract.Row // the region's one slot, named "k"
}

func newLentHead(t *testing.T, rule broken.Rule) *lentHead {
	t.Helper()
	st := memdrv.NewStore()
	d, err := broken.New(rule, st, memdrv.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	mem := paint(t, slotBytes, 2)
	region := mem.Region
	region.SlotCount, region.Len = 1, slotBytes
	reg, err := d.Register(region)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.True(t, d.Inner().Drain(context.Background()))
		require.NoError(t, d.Inner().Unregister(reg))
		require.NoError(t, mem.Free())
	})
	return &lentHead{d: d, store: st, mem: mem,
		row: contract.Row{Name: []byte("k"), Spans: []contract.Span{region.Slot(0)}}}
}

func (h *lentHead) get(t *testing.T) contract.Operation {
	t.Helper()
	op, err := h.d.Get(rows(h.row), nil, nil)
	require.NoError(t, err)
	synctest.Wait()
	return op
}

func TestWritesOutsideSpanNeverPastItsRegion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newLentHead(t, broken.WritesOutsideSpan)
		h.store.Set("k", object(slotBytes))
		op := h.get(t)
		assert.Equal(t, []contract.RowStatus{contract.Ready}, op.Poll(nil).Rows)
		assert.Equal(t, object(slotBytes), h.mem.Slot(0))
		assert.True(t, untouched(h.mem.Slot(1)), "the row ends the region: no byte past it is lent")
	})
}

func TestLongObjectSpillsFromTheRegionsStartToItsEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newLentHead(t, broken.LongObjectSpills)
		long := object(slotBytes + slotBytes/2)
		h.store.Set("k", long)
		op := h.get(t)
		assert.Equal(t, []contract.RowStatus{contract.Fault}, op.Poll(nil).Rows)
		assert.Equal(t, long[:slotBytes], h.mem.Slot(0), "a row at the region's first byte spills")
		assert.True(t, untouched(h.mem.Slot(1)), "up to the region's end, not past it")
	})
}

// An object exactly as long as a row of two spans with a gap between
// them is not long: it lands span by span, as memdrv lands it, and the
// gap is left alone.
func TestLongObjectSpillsLeavesAnExactObjectAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.LongObjectSpills, memdrv.Options{MultiSpan: true})
		half := int64(slotBytes / 2)
		row := contract.Row{Name: []byte("k"), Spans: []contract.Span{
			{Addr: s.mem.Region.Slot(0).Addr, Len: half},
			{Addr: s.mem.Region.Slot(2).Addr, Len: half},
		}}
		obj := object(slotBytes)
		s.store.Set("k", obj)
		op := s.get(row)
		synctest.Wait()
		assert.Equal(t, []contract.RowStatus{contract.Ready}, op.Poll(nil).Rows)
		assert.Equal(t, obj[:half], s.mem.Slot(0)[:half])
		assert.Equal(t, obj[half:], s.mem.Slot(2)[:half])
		assert.True(t, untouched(s.mem.Slot(0)[half:]), "the gap after the first span")
		assert.True(t, untouched(s.mem.Slot(1)), "the gap between the spans")
	})
}

// A read that broke half way ends Fault with the object in hand; the
// object is not short, so ShortObjectReady leaves the verdict alone.
func TestShortObjectReadyLeavesABrokenReadOfAnExactObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.ShortObjectReady, memdrv.Options{})
		s.store.Set("k", object(slotBytes))
		s.d.Inner().FailReads("k")
		op := s.get(s.row(1, "k"))
		synctest.Wait()
		assert.Equal(t, []contract.RowStatus{contract.Fault}, op.Poll(nil).Rows)
	})
}

// A row that ends exactly where its region ends lies wholly in it: its
// bytes are written again after access ended, as anywhere else.
func TestGetWritesAfterEndAtTheRegionsEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newLentHead(t, broken.GetWritesAfterEnd)
		obj := object(slotBytes)
		h.store.Set("k", obj)
		op := h.get(t)
		require.Equal(t, contract.Ended, op.Poll(nil).Access)
		copy(h.mem.Slot(0), bytes.Repeat([]byte{fillByte}, slotBytes))
		require.True(t, h.d.Drain(context.Background()))
		assert.Equal(t, obj, h.mem.Slot(0), "written again after access ended")
		assert.True(t, untouched(h.mem.Slot(1)))
	})
}

// Only DeviceRefused refuses a Device region; every other rule
// registers it as memdrv does when DeviceMemory is declared.
func TestOnlyDeviceRefusedRefusesDeviceRegions(t *testing.T) {
	dev := paint(t, slotBytes, 1)
	defer func() { require.NoError(t, dev.Free()) }()
	r := dev.Region
	r.Kind = contract.Device
	for _, rule := range broken.AllRules() {
		d, err := broken.New(rule, memdrv.NewStore(), memdrv.Options{DeviceMemory: true})
		require.NoError(t, err)
		reg, err := d.Register(r)
		if rule == broken.DeviceRefused {
			assert.ErrorIs(t, err, contract.ErrDriverRejected, rule)
			continue
		}
		if assert.NoError(t, err, rule) {
			require.NoError(t, d.Inner().Unregister(reg), rule)
		}
	}
}

// A region whose rows are all final is busy while their operation is
// open (a row elsewhere still runs): no queued row, so
// UnregisterIgnoresQueued tells the truth.
func TestUnregisterIgnoresQueuedTellsTheTruthWithNothingQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.UnregisterIgnoresQueued, memdrv.Options{Workers: 1})
		other := paint(t, slotBytes, 1)
		oreg, err := s.d.Register(other.Region)
		require.NoError(t, err)
		s.store.Set("held", object(slotBytes))
		gate := s.d.Inner().Hold(memdrv.GetDir)
		// The one worker takes the first row and waits at the gate; the
		// second, in the subject's region, is cancelled unstarted.
		op := s.get(contract.Row{Name: []byte("held"), Spans: []contract.Span{other.Region.Slot(0)}}, s.row(0, "q"))
		require.NoError(t, gate.Held(t.Context()))
		op.Cancel()
		require.Equal(t, contract.Cancelled, op.Poll(nil).Rows[1])
		require.Equal(t, memdrv.RegionRows{}, s.d.Inner().RowsIn(s.mem.Region))
		assert.ErrorIs(t, s.d.Unregister(s.reg), memdrv.ErrRegionBusy, "busy, and nothing queued")
		gate.Release()
		synctest.Wait()
		require.True(t, s.d.Inner().Drain(context.Background()))
		require.NoError(t, s.d.Inner().Unregister(oreg))
		require.NoError(t, other.Free())
	})
}

// A region answered nil while busy stays owed across a Close that finds
// it still busy, and is revoked by the Drain that follows.
func TestUnregisterWhileBusyKeepsWhatItOwesUntilItCanPay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.UnregisterWhileBusy, memdrv.Options{})
		s.store.Set("held", object(slotBytes))
		gate := s.d.Inner().Hold(memdrv.GetDir)
		s.get(s.row(0, "held"))
		require.NoError(t, gate.Held(t.Context()))
		require.NoError(t, s.d.Unregister(s.reg), "the lie")
		require.Error(t, s.d.Close(), "no Drain returned true")
		require.Len(t, s.d.Inner().Regions(), 1, "still busy: still registered")
		gate.Release()
		synctest.Wait()
		require.True(t, s.d.Drain(context.Background()))
		assert.Empty(t, s.d.Inner().Regions(), "revoked once no longer busy")
	})
}

// A Drain with its context already ended, on a driver with nothing live
// or running, is memdrv's: it drains, and says so.
func TestAdmitsAfterFalseDrainDrainsAnIdleDriver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.AdmitsAfterFalseDrain, memdrv.Options{})
		assert.True(t, s.d.Drain(ended()))
		_, err := s.d.Put(rows(s.row(0, "after")), nil)
		assert.ErrorIs(t, err, contract.ErrDriverRejected, "a drained driver admits nothing")
	})
}
