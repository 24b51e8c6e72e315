package memdrv_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

func TestRegisterRefusals(t *testing.T) {
	good := func(m *memdrv.Memory) contract.SlotRegion { return m.Region }
	tests := []struct {
		name       string
		opts       memdrv.Options
		before     func(t *testing.T, d *memdrv.Driver)
		region     func(m *memdrv.Memory) contract.SlotRegion
		want       string
		badRegion  bool
		deviceKind bool
	}{
		{name: "zero base", region: func(m *memdrv.Memory) contract.SlotRegion {
			r := m.Region
			r.Base = 0
			return r
		}, want: "Base is 0", badRegion: true},
		{name: "no kind", region: func(m *memdrv.Memory) contract.SlotRegion {
			r := m.Region
			r.Kind = 0
			return r
		}, want: "Kind", badRegion: true},
		{name: "zero slot size", region: func(m *memdrv.Memory) contract.SlotRegion {
			r := m.Region
			r.SlotBytes = 0
			return r
		}, want: "SlotBytes is 0", badRegion: true},
		{name: "short length", region: func(m *memdrv.Memory) contract.SlotRegion {
			r := m.Region
			r.Len = r.SlotBytes*int64(r.SlotCount) - 1
			return r
		}, want: "Len is", badRegion: true},
		{name: "device memory undeclared", region: good, deviceKind: true, want: "does not declare DeviceMemory"},
		{name: "after drain", region: good, before: func(t *testing.T, d *memdrv.Driver) {
			require.True(t, d.Drain(context.Background()))
		}, want: "drained"},
		{name: "after close", region: good, before: func(t *testing.T, d *memdrv.Driver) {
			require.True(t, d.Drain(context.Background()))
			require.NoError(t, d.Close())
		}, want: "closed"},
		{name: "staged rejection", region: good, before: func(t *testing.T, d *memdrv.Driver) {
			d.FailNextRegister(errors.Join(contract.ErrDriverRejected, errors.New("store refused the buffer")))
		}, want: "store refused the buffer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := memdrv.New(memdrv.NewStore(), tt.opts)
			kind := contract.Host
			if tt.deviceKind {
				kind = contract.Device
			}
			m := alloc(t, 64, 2, kind)
			if tt.before != nil {
				tt.before(t, d)
			}
			reg, err := d.Register(tt.region(m))
			require.Error(t, err)
			assert.Zero(t, reg)
			assert.ErrorIs(t, err, contract.ErrDriverRejected)
			assert.Equal(t, tt.badRegion, errors.Is(err, contract.ErrInvalidRegion), "wraps ErrInvalidRegion")
			assert.Contains(t, err.Error(), tt.want)
			assert.Empty(t, d.Regions(), "nothing registered")
		})
	}
}

func TestRegisterDeviceMemory(t *testing.T) {
	d := memdrv.New(memdrv.NewStore(), memdrv.Options{DeviceMemory: true})
	m := alloc(t, 64, 2, contract.Device)
	reg, err := d.Register(m.Region)
	require.NoError(t, err)
	assert.NotZero(t, reg)
	assert.Equal(t, []contract.SlotRegion{m.Region}, d.Regions())
	require.NoError(t, d.Unregister(reg))
}

// Regions returns a copy: changing it changes neither what the driver
// reports nor what it admits.
func TestRegionsIsACopy(t *testing.T) {
	d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	m, _ := register(t, d, 64, 2)
	rs := d.Regions()
	require.Equal(t, []contract.SlotRegion{m.Region}, rs)
	rs[0] = contract.SlotRegion{}
	assert.Equal(t, []contract.SlotRegion{m.Region}, d.Regions())
	op, err := d.Get(batch(contract.Row{Name: []byte("k"), Spans: []contract.Span{m.Region.Slot(1)}}), nil, nil)
	require.NoError(t, err, "the region is still live for admission")
	assert.NotNil(t, op)
	require.True(t, d.Drain(t.Context()))
}

func TestFailNextRegister(t *testing.T) {
	cause := errors.New("transport down")
	tests := []struct {
		name     string
		staged   error
		wantLive bool
	}{
		{"rejected", errors.Join(contract.ErrDriverRejected, cause), false},
		{"registration error without a handle", &contract.RegistrationError{Err: cause}, false},
		{"registration error with a handle", &contract.RegistrationError{Registration: 1, Err: cause}, true},
		{"any other error", cause, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
			m := alloc(t, 64, 2, contract.Host)
			d.FailNextRegister(tt.staged)
			reg, err := d.Register(m.Region)
			require.Error(t, err)
			assert.Zero(t, reg)
			assert.ErrorIs(t, err, cause)

			var re *contract.RegistrationError
			if tt.wantLive {
				require.ErrorAs(t, err, &re)
				assert.True(t, re.MayBeLive())
				assert.Equal(t, []contract.SlotRegion{m.Region}, d.Regions(), "the region is live")
				assert.NoError(t, d.Unregister(re.Registration), "the handle revokes it")
			} else if errors.As(err, &re) {
				assert.False(t, re.MayBeLive())
			}
			assert.Empty(t, d.Regions())

			// The failure was for one registration only.
			reg, err = d.Register(m.Region)
			require.NoError(t, err)
			assert.NotZero(t, reg)
			require.NoError(t, d.Unregister(reg))
		})
	}
	t.Run("cleared by nil", func(t *testing.T) {
		d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
		m := alloc(t, 64, 2, contract.Host)
		d.FailNextRegister(cause)
		d.FailNextRegister(nil)
		reg, err := d.Register(m.Region)
		require.NoError(t, err)
		require.NoError(t, d.Unregister(reg))
	})
}

func TestUnregisterHandles(t *testing.T) {
	d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	m := alloc(t, 64, 2, contract.Host)
	reg, err := d.Register(m.Region)
	require.NoError(t, err)
	again, err := d.Register(m.Region)
	require.NoError(t, err, "the same memory may be registered twice")
	assert.NotEqual(t, reg, again, "handles are never reused")

	for _, bad := range []contract.Registration{0, again + 1, 1 << 40} {
		err := d.Unregister(bad)
		assert.ErrorIs(t, err, contract.ErrDriverRejected, "handle %d", bad)
		assert.Contains(t, err.Error(), "never issued")
	}
	require.NoError(t, d.Unregister(reg))
	assert.NoError(t, d.Unregister(reg), "revoking twice is nil")
	assert.Equal(t, []contract.SlotRegion{m.Region}, d.Regions(), "the other handle is still live")
	require.NoError(t, d.Unregister(again))
	assert.Empty(t, d.Regions())
}
