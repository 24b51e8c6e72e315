package broken_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/broken"
)

// The rules of batches of regions, failed registrations, Unprovable over
// time and Capabilities.

// batchOf registers three regions of one slot each with d as one batch;
// at the end of the test the wrapped driver revokes it and the memory is
// freed.
func batchOf(t *testing.T, d *broken.TogetherDriver) ([]*memdrv.Memory, contract.Registration) {
	t.Helper()
	var mems []*memdrv.Memory
	var specs []contract.RegionSpec
	for _, label := range []string{"first", "middle", "last"} {
		m := paint(t, slotBytes, 1)
		mems = append(mems, m)
		specs = append(specs, contract.RegionSpec{Label: label, Region: m.Region})
	}
	reg, err := d.RegisterRegions(specs)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.True(t, d.Inner().Drain(context.Background()), "every access ended")
		require.NoError(t, (&memdrv.TogetherDriver{Driver: d.Inner()}).UnregisterRegions(reg))
		for _, m := range mems {
			require.NoError(t, m.Free())
		}
	})
	return mems, reg
}

func quietOptions() memdrv.Options { return memdrv.Options{Logger: slog.New(slog.DiscardHandler)} }

func TestTogetherBusyLastOnly(t *testing.T) {
	for i, pos := range []string{"first", "middle", "last"} {
		t.Run(pos, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := memdrv.NewStore()
				d, err := broken.NewTogether(broken.TogetherBusyLastOnly, store, quietOptions())
				require.NoError(t, err)
				assert.True(t, d.Rule().Together())
				mems, reg := batchOf(t, d)
				store.Set("busy", object(slotBytes))
				gate := d.Inner().Hold(memdrv.GetDir)
				op, err := d.Get(rows(contract.Row{Name: []byte("busy"), Spans: []contract.Span{mems[i].Region.Slot(0)}}), nil, nil)
				require.NoError(t, err)
				require.NoError(t, gate.Held(t.Context()))
				err = d.UnregisterRegions(reg)
				if pos == "last" {
					assert.ErrorIs(t, err, memdrv.ErrRegionBusy, "the last region busy: the truth")
				} else {
					assert.NoError(t, err, "only an earlier region busy: answered nil")
				}
				assert.Len(t, d.Inner().Regions(), 3, "the wrapped driver keeps the busy batch")
				gate.Release()
				synctest.Wait()
				assert.Equal(t, contract.Ended, op.Poll(nil).Access)
				require.True(t, d.Drain(context.Background()))
				if pos == "last" {
					assert.Len(t, d.Inner().Regions(), 3, "refused: still registered")
				} else {
					assert.Empty(t, d.Inner().Regions(), "what it answered nil for is revoked once idle")
				}
			})
		})
	}
}

// A driver from New has no RegisterRegions: TogetherBusyLastOnly is
// memdrv's there.
func TestTogetherRulesNeedNewTogether(t *testing.T) {
	d, err := broken.New(broken.TogetherBusyLastOnly, memdrv.NewStore(), quietOptions())
	require.NoError(t, err)
	_, ok := any(d).(contract.RegionsTogether)
	assert.False(t, ok)
	for _, rule := range broken.AllRules() {
		assert.Equal(t, rule == broken.TogetherBusyLastOnly, rule.Together(), rule)
	}
	_, err = broken.NewTogether("no-such-rule", memdrv.NewStore(), memdrv.Options{})
	assert.ErrorContains(t, err, `"no-such-rule"`)
}

func TestCleanRefusalWhenLive(t *testing.T) {
	live := &contract.RegistrationError{Registration: 1, Err: errors.New("the store's answer was lost")}
	t.Run("register", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newSubject(t, broken.CleanRefusalWhenLive, memdrv.Options{})
			mem := paint(t, slotBytes, 1)
			s.d.Inner().FailNextRegister(live)
			reg, err := s.d.Register(mem.Region)
			assert.Zero(t, reg)
			require.ErrorIs(t, err, contract.ErrDriverRejected, "a clean refusal")
			assert.NotErrorAs(t, err, new(*contract.RegistrationError))
			assert.Len(t, s.d.Inner().Regions(), 2, "yet the region is live")
			copy(mem.Slot(0), object(slotBytes))
			op := s.put(nil, contract.Row{Name: []byte("in-refused"), Spans: []contract.Span{mem.Region.Slot(0)}})
			synctest.Wait()
			assert.Equal(t, []contract.RowStatus{contract.Ready}, op.Poll(nil).Rows, "a row moves through it")
			require.True(t, s.d.Drain(context.Background()))
			assert.Len(t, s.d.Inner().Regions(), 1, "revoked by itself once idle")
			require.NoError(t, mem.Free())
		})
	})
	t.Run("register regions", func(t *testing.T) {
		d, err := broken.NewTogether(broken.CleanRefusalWhenLive, memdrv.NewStore(), quietOptions())
		require.NoError(t, err)
		mem := paint(t, slotBytes, 1)
		(&memdrv.TogetherDriver{Driver: d.Inner()}).FailNextRegistration(true)
		reg, err := d.RegisterRegions([]contract.RegionSpec{{Label: "a", Region: mem.Region}})
		assert.Zero(t, reg)
		require.ErrorIs(t, err, contract.ErrDriverRejected)
		assert.NotErrorAs(t, err, new(*contract.RegistrationError))
		assert.Len(t, d.Inner().Regions(), 1, "yet the batch is live")
		require.True(t, d.Drain(context.Background()))
		require.NoError(t, d.Close(), "the batch it owed was revoked first")
		require.NoError(t, mem.Free())
	})
	t.Run("clean failures stay as they are", func(t *testing.T) {
		s := newSubject(t, broken.CleanRefusalWhenLive, memdrv.Options{})
		mem := paint(t, slotBytes, 1)
		dead := &contract.RegistrationError{Err: errors.New("refused")}
		s.d.Inner().FailNextRegister(dead)
		_, err := s.d.Register(mem.Region)
		assert.Equal(t, dead, err)
		assert.Len(t, s.d.Inner().Regions(), 1)
		require.NoError(t, mem.Free())
	})
}

func TestUnprovableEndsLater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.UnprovableEndsLater, memdrv.Options{})
		s.store.Set("u", object(slotBytes))
		s.d.Inner().UnprovableGets("u")
		op := s.get(s.row(0, "u"))
		synctest.Wait()
		for range 3 {
			assert.Equal(t, contract.Unprovable, op.Poll(nil).Access, "the next polls: unprovable")
		}
		time.Sleep(time.Second / 2)
		assert.Equal(t, contract.Unprovable, op.Poll(nil).Access, "not yet")
		time.Sleep(time.Second)
		st := op.Poll(nil)
		assert.Equal(t, contract.Ended, st.Access, "reported ended after a while")
		assert.Equal(t, []contract.RowStatus{contract.Fault}, st.Rows)
		assert.Equal(t, 1, s.d.Inner().Unprovable(), "the wrapped driver knows it is not")
		assert.False(t, s.d.Drain(context.Background()))
		assert.ErrorIs(t, s.d.Unregister(s.reg), memdrv.ErrRegionBusy)
		require.NoError(t, s.d.Inner().Recycle(context.Background()))
	})
}

func TestCapabilitiesChangeAfterCrash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.CapabilitiesChangeAfterCrash, memdrv.Options{})
		first := s.d.Capabilities()
		require.Equal(t, s.d.Inner().Capabilities(), first)

		// A read the store fails and a put it declines change nothing.
		s.store.Set("failing", object(slotBytes))
		s.d.Inner().FailReads("failing")
		s.get(s.row(0, "failing"))
		s.store.SetFull()
		copy(s.mem.Slot(1), object(slotBytes))
		s.put(nil, s.row(1, "declined"))
		synctest.Wait()
		assert.Equal(t, first, s.d.Capabilities())

		s.d.Inner().Crash(memdrv.GetDir)
		op := s.get(s.row(2, "crashing"))
		synctest.Wait()
		assert.Equal(t, []contract.RowStatus{contract.Fault}, op.Poll(nil).Rows)
		after := s.d.Capabilities()
		assert.NotEqual(t, first, after)
		assert.Equal(t, !first.Cancel, after.Cancel, "Cancel the other way round")
		after.Cancel = first.Cancel
		assert.Equal(t, first, after, "and nothing else")
		assert.Equal(t, first, s.d.Inner().Capabilities(), "the wrapped driver's are as they were")
	})
}

func TestCapabilitiesChangeAfterRecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSubject(t, broken.CapabilitiesChangeAfterCrash, memdrv.Options{NoCancel: true})
		first := s.d.Capabilities()
		require.False(t, first.Cancel)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		s.store.Set("held", object(slotBytes))
		gate := s.d.Inner().Hold(memdrv.GetDir)
		s.get(s.row(0, "held"))
		require.NoError(t, gate.Held(t.Context()))
		require.ErrorIs(t, s.d.Inner().Recycle(ctx), contract.ErrDriverRejected, "a Recycle that gave up")
		assert.Equal(t, first, s.d.Capabilities(), "changes nothing")
		gate.Release()
		synctest.Wait()
		require.NoError(t, s.d.Inner().Recycle(context.Background()))
		after := s.d.Capabilities()
		assert.True(t, after.Cancel, "Cancel the other way round")
		after.Cancel = first.Cancel
		assert.Equal(t, first, after, "and nothing else")
	})
}
