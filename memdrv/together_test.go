package memdrv_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

func specs(ms ...*memdrv.Memory) []contract.RegionSpec {
	out := make([]contract.RegionSpec, len(ms))
	for i, m := range ms {
		out[i] = contract.RegionSpec{Label: string(rune('A' + i)), Region: m.Region}
	}
	return out
}

func TestRegisterRegionsRefusals(t *testing.T) {
	tests := []struct {
		name      string
		opts      memdrv.Options
		specs     func(a, b *memdrv.Memory) []contract.RegionSpec
		before    func(t *testing.T, d *memdrv.TogetherDriver)
		want      string
		badRegion bool
	}{
		{name: "empty batch", specs: func(a, b *memdrv.Memory) []contract.RegionSpec { return nil }, want: "no regions"},
		{name: "bad geometry in the last region", specs: func(a, b *memdrv.Memory) []contract.RegionSpec {
			s := specs(a, b)
			s[1].Region.SlotCount = 0
			return s
		}, want: `region "B"`, badRegion: true},
		{name: "bad geometry in the first region", specs: func(a, b *memdrv.Memory) []contract.RegionSpec {
			s := specs(a, b)
			s[0].Region.Len = 1
			return s
		}, want: `region "A"`, badRegion: true},
		{name: "device memory undeclared", specs: func(a, b *memdrv.Memory) []contract.RegionSpec {
			s := specs(a, b)
			s[1].Region.Kind = contract.Device
			return s
		}, want: `region "B" is device memory`},
		{name: "after drain", specs: func(a, b *memdrv.Memory) []contract.RegionSpec { return specs(a, b) },
			before: func(t *testing.T, d *memdrv.TogetherDriver) { require.True(t, d.Drain(context.Background())) },
			want:   "drained"},
		{name: "empty after drain", specs: func(a, b *memdrv.Memory) []contract.RegionSpec { return nil },
			before: func(t *testing.T, d *memdrv.TogetherDriver) { require.True(t, d.Drain(context.Background())) },
			want:   "drained"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := memdrv.NewTogether(memdrv.NewStore(), tt.opts)
			a, b := alloc(t, 64, 2, contract.Host), alloc(t, 128, 3, contract.Host)
			if tt.before != nil {
				tt.before(t, d)
			}
			reg, err := d.RegisterRegions(tt.specs(a, b))
			require.Error(t, err)
			assert.Zero(t, reg)
			assert.ErrorIs(t, err, contract.ErrDriverRejected)
			assert.Equal(t, tt.badRegion, errors.Is(err, contract.ErrInvalidRegion))
			assert.Contains(t, err.Error(), tt.want)
			assert.Empty(t, d.Regions(), "nothing registered")
		})
	}
}

func TestFailNextRegistration(t *testing.T) {
	for _, live := range []bool{false, true} {
		t.Run(map[bool]string{false: "not live", true: "live"}[live], func(t *testing.T) {
			d := memdrv.NewTogether(memdrv.NewStore(), memdrv.Options{})
			a, b := alloc(t, 64, 2, contract.Host), alloc(t, 64, 2, contract.Host)
			d.FailNextRegistration(live)
			reg, err := d.RegisterRegions(specs(a, b))
			assert.Zero(t, reg)
			var re *contract.RegistrationError
			require.ErrorAs(t, err, &re)
			assert.ErrorIs(t, err, memdrv.ErrStagedFailure)
			assert.Equal(t, live, re.MayBeLive())
			if live {
				assert.ElementsMatch(t, []contract.SlotRegion{a.Region, b.Region}, d.Regions())
				require.NoError(t, d.UnregisterRegions(re.Registration))
			}
			assert.Empty(t, d.Regions())

			reg, err = d.RegisterRegions(specs(a, b))
			require.NoError(t, err, "the failure was for one registration")
			require.NoError(t, d.UnregisterRegions(reg))
		})
	}
}

func TestRegionsTogetherBusyBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := memdrv.NewStore()
		d := memdrv.NewTogether(s, memdrv.Options{Logger: quiet})
		var rt contract.RegionsTogether = d // found by type assertion in the binding
		a, b := alloc(t, slotBytes, 2, contract.Host), alloc(t, slotBytes, 2, contract.Host)
		single := alloc(t, slotBytes, 1, contract.Host)
		reg, err := rt.RegisterRegions(specs(a, b))
		require.NoError(t, err)
		sreg, err := d.Register(single.Region)
		require.NoError(t, err)

		assert.ErrorIs(t, d.Unregister(reg), contract.ErrDriverRejected, "a batch handle is not Unregister's")
		assert.ErrorIs(t, rt.UnregisterRegions(sreg), contract.ErrDriverRejected, "a single handle is not UnregisterRegions'")

		// Rows in both regions of the batch move.
		s.Set("k", pattern(slotBytes, 5))
		gate := d.Hold(memdrv.GetDir)
		op, err := d.Get(batch(
			contract.Row{Name: []byte("k"), Spans: []contract.Span{b.Region.Slot(1)}},
		), nil, nil)
		require.NoError(t, err)
		require.NoError(t, gate.Held(t.Context()))

		err = rt.UnregisterRegions(reg)
		require.ErrorIs(t, err, contract.ErrDriverRejected)
		assert.ErrorIs(t, err, memdrv.ErrRegionBusy)
		assert.Contains(t, err.Error(), "region 1")
		assert.ElementsMatch(t, []contract.SlotRegion{a.Region, b.Region, single.Region}, d.Regions(), "the whole batch stays")
		put, err := d.Put(batch(contract.Row{Name: []byte("p"), Spans: []contract.Span{a.Region.Slot(0)}}), nil)
		require.NoError(t, err, "the batch's other region still takes work")

		gate.Release()
		synctest.Wait()
		assert.Equal(t, statuses(contract.Ready), op.Poll(nil).Rows)
		assert.Equal(t, statuses(contract.Ready), put.Poll(nil).Rows)
		assert.Equal(t, pattern(slotBytes, 5), b.Slot(1))

		require.NoError(t, rt.UnregisterRegions(reg))
		require.NoError(t, rt.UnregisterRegions(reg), "revoking twice is nil")
		require.NoError(t, d.Unregister(sreg))
		require.True(t, d.Drain(context.Background()))
		require.NoError(t, d.Close())
	})
}

// A staged failure waits for a registration that passes validation: bad
// geometry is refused first, with nothing registered, and the staged
// failure comes on the next good batch.
func TestValidationComesBeforeAStagedFailure(t *testing.T) {
	d := memdrv.NewTogether(memdrv.NewStore(), memdrv.Options{})
	a, b := alloc(t, 64, 2, contract.Host), alloc(t, 64, 2, contract.Host)
	bad := specs(a, b)
	bad[1].Region.Base = 0

	d.FailNextRegistration(true)
	_, err := d.RegisterRegions(bad)
	require.ErrorIs(t, err, contract.ErrInvalidRegion)
	assert.NotErrorAs(t, err, new(*contract.RegistrationError))
	assert.Empty(t, d.Regions())
	_, err = d.RegisterRegions(specs(a, b))
	var re *contract.RegistrationError
	require.ErrorAs(t, err, &re, "the staged failure was still pending")
	require.NoError(t, d.UnregisterRegions(re.Registration))

	d.FailNextRegister(&contract.RegistrationError{Registration: 1, Err: errors.New("staged")})
	_, err = d.Register(bad[1].Region)
	require.ErrorIs(t, err, contract.ErrInvalidRegion)
	assert.Empty(t, d.Regions())
	_, err = d.Register(a.Region)
	require.ErrorAs(t, err, &re, "the staged failure was still pending")
	require.NoError(t, d.Unregister(re.Registration))
}
