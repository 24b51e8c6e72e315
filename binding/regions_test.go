package binding

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

func TestBindServesTheKindsTheDriverReaches(t *testing.T) {
	regions := []contract.SlotRegion{
		fakeRegion(0, contract.Host),
		fakeRegion(1, contract.Device),
		fakeRegion(2, contract.Host),
	}
	for _, device := range []bool{false, true} {
		t.Run(fmt.Sprintf("device=%v", device), func(t *testing.T) {
			caps := getPut
			caps.DeviceMemory = device
			d := newFake(caps)
			hold := &countingHold{}
			r, err := Bind(d, regions, hold)
			require.NoError(t, err)
			assert.True(t, r.Served(0))
			assert.Equal(t, device, r.Served(1))
			assert.True(t, r.Served(2))
			assert.False(t, r.Served(3))
			assert.False(t, r.Served(-1))
			got, served := r.Region(1)
			assert.Equal(t, regions[1], got, "an unserved region keeps its index and geometry")
			assert.Equal(t, device, served)
			_, served = r.Region(3)
			assert.False(t, served)
			assert.Equal(t, 3, r.Len())
			want := 2
			if device {
				want = 3
			}
			assert.Equal(t, want, d.Live())
			assert.Len(t, r.Held(), want)
			assert.Zero(t, hold.Released())

			require.NoError(t, r.Unbind(context.Background()))
			assert.Zero(t, d.Live())
			assert.Equal(t, 1, hold.Released())
			assert.True(t, r.Released())
			require.NoError(t, r.Unbind(context.Background()), "unbinding again is a no-op")
			assert.Equal(t, 1, hold.Released(), "the hold is released once")
		})
	}
}

func TestBindRejectsWithNothingToServe(t *testing.T) {
	d := newFake(getPut) // no DeviceMemory
	hold := &countingHold{}
	r, err := Bind(d, []contract.SlotRegion{fakeRegion(0, contract.Device)}, hold)
	require.ErrorIs(t, err, contract.ErrConstructionRejected)
	assert.Nil(t, r)
	assert.Equal(t, 1, hold.Released())
	assert.Empty(t, d.Events(), "the driver was not asked")

	hold = &countingHold{}
	_, err = Bind(d, nil, hold)
	require.ErrorIs(t, err, contract.ErrConstructionRejected)
	assert.Equal(t, 1, hold.Released())

	_, err = Bind(nil, []contract.SlotRegion{fakeRegion(0, contract.Host)}, hold)
	require.ErrorIs(t, err, contract.ErrConstructionRejected)
	assert.Equal(t, 2, hold.Released())

	_, err = Bind(d, []contract.SlotRegion{fakeRegion(0, contract.Host)}, nil)
	require.ErrorIs(t, err, contract.ErrConstructionRejected)
}

func TestBindRejectsBadGeometryBeforeAskingTheStore(t *testing.T) {
	bad := fakeRegion(1, contract.Host)
	bad.Len = bad.SlotBytes*int64(bad.SlotCount) - 1
	regions := []contract.SlotRegion{fakeRegion(0, contract.Host), bad}
	for name, d := range map[string]contract.Driver{
		"each":     newFake(getPut),
		"together": newFakeTogether(getPut),
	} {
		t.Run(name, func(t *testing.T) {
			hold := &countingHold{}
			_, err := Bind(d, regions, hold)
			require.ErrorIs(t, err, contract.ErrConstructionRejected)
			require.ErrorIs(t, err, contract.ErrInvalidRegion)
			assert.ErrorContains(t, err, "region 1")
			assert.Equal(t, 1, hold.Released())
			var events []string
			switch d := d.(type) {
			case *fakeDriver:
				events = d.Events()
			case *fakeTogether:
				events = d.Events()
			}
			assert.Empty(t, events, "the store was never asked")
		})
	}
}

func TestBindEachRollsBackAFailureThatEscapedNothing(t *testing.T) {
	for name, fail := range map[string]error{
		"driver rejected":               fmt.Errorf("%w: out of keys", contract.ErrDriverRejected),
		"registration error, no handle": &contract.RegistrationError{Err: errors.New("rdma down")},
	} {
		t.Run(name, func(t *testing.T) {
			d := newFake(getPut)
			d.failRegistration(3, func() (contract.Registration, error) { return 0, fail })
			hold := &countingHold{log: d}
			regions := []contract.SlotRegion{fakeRegion(0, contract.Host), fakeRegion(1, contract.Host), fakeRegion(2, contract.Host)}
			r, err := Bind(d, regions, hold)
			require.ErrorIs(t, err, contract.ErrConstructionRejected)
			require.ErrorIs(t, err, fail)
			assert.ErrorContains(t, err, "region 2")
			assert.Nil(t, r)
			assert.Zero(t, d.Live(), "what registered was rolled back")
			assert.Equal(t, 1, hold.Released())
			ev := d.Events()
			assert.Equal(t, []string{"unregister 2", "unregister 1", "release"}, ev[3:], "rolled back newest first, then released")
		})
	}
}

func TestBindEachKeepsTheHoldWhenARegistrationMayBeLive(t *testing.T) {
	cases := map[string]struct {
		fail     func() (contract.Registration, error)
		held     []string
		unbinds  bool // Unbind can release the hold later
		revoking string
	}{
		"registration error with handle": {
			fail: func() (contract.Registration, error) {
				return 0, &contract.RegistrationError{Registration: 77, Err: errors.New("ack lost")}
			},
			held:     []string{"region 1"},
			unbinds:  true,
			revoking: "unregister 77",
		},
		"error that certifies nothing": {
			fail: func() (contract.Registration, error) { return 0, errors.New("socket closed") },
			held: []string{"region 1 (no handle)"},
		},
		"panic": {
			fail: func() (contract.Registration, error) { panic("driver bug") },
			held: []string{"region 1 (no handle)"},
		},
		"registration 0 without error": {
			fail: func() (contract.Registration, error) { return 0, nil },
			held: []string{"region 1 (no handle)"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := newFake(getPut)
			d.failRegistration(2, tc.fail)
			// the fake keeps 77 live, as the driver said it may be
			d.live[77] = contract.SlotRegion{}
			hold := &countingHold{log: d}
			r, err := Bind(d, []contract.SlotRegion{fakeRegion(0, contract.Host), fakeRegion(1, contract.Host)}, hold)
			assert.Nil(t, r)
			require.ErrorIs(t, err, ErrRegistrationMayBeLive)
			assert.NotErrorIs(t, err, contract.ErrConstructionRejected)
			var live *LiveRegistrationError
			require.ErrorAs(t, err, &live)
			assert.Equal(t, tc.held, live.Held)
			assert.Zero(t, hold.Released(), "the hold is kept")
			assert.Contains(t, d.Events(), "unregister 1", "the clean registration was rolled back")

			err = live.Unbind(context.Background())
			if !tc.unbinds {
				require.ErrorIs(t, err, ErrRegistrationMayBeLive)
				assert.Zero(t, hold.Released(), "nothing to revoke: the hold is kept for good")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 1, hold.Released())
			ev := d.Events()
			assert.Equal(t, []string{tc.revoking, "release"}, ev[len(ev)-2:], "revoked before the hold goes")
		})
	}
}

func TestBindEachKeepsTheHoldWhenARollbackIsRefused(t *testing.T) {
	d := newFake(getPut)
	d.failRegistration(2, func() (contract.Registration, error) {
		return 0, fmt.Errorf("%w: full", contract.ErrDriverRejected)
	})
	d.refuseUnregister = 1
	hold := &countingHold{log: d}
	_, err := Bind(d, []contract.SlotRegion{fakeRegion(0, contract.Host), fakeRegion(1, contract.Host)}, hold)
	var live *LiveRegistrationError
	require.ErrorAs(t, err, &live)
	assert.Equal(t, []string{"region 0"}, live.Held)
	assert.Zero(t, hold.Released())
	require.NoError(t, live.Unbind(context.Background()))
	assert.Equal(t, 1, hold.Released())
	assert.Zero(t, d.Live())
}

func TestBindTogetherFailureShapes(t *testing.T) {
	regions := []contract.SlotRegion{fakeRegion(0, contract.Host), fakeRegion(1, contract.Device), fakeRegion(2, contract.Host)}
	t.Run("registers the served regions as one batch", func(t *testing.T) {
		d := newFakeTogether(getPut)
		hold := &countingHold{log: d.fakeDriver}
		r, err := Bind(d, regions, hold)
		require.NoError(t, err)
		assert.Equal(t, []string{"register-regions [region 0 region 2] -> 1"}, d.Events())
		assert.Equal(t, []string{"region 0", "region 2"}, r.Held())
		require.NoError(t, r.Unbind(context.Background()))
		assert.Equal(t, []string{"unregister-regions 1", "release"}, d.Events()[1:])
	})
	t.Run("1 bad geometry", func(t *testing.T) {
		d := newFakeTogether(getPut)
		bad := regions[2]
		bad.SlotBytes = 0
		hold := &countingHold{}
		_, err := Bind(d, []contract.SlotRegion{regions[0], bad}, hold)
		require.ErrorIs(t, err, contract.ErrConstructionRejected)
		require.ErrorIs(t, err, contract.ErrInvalidRegion)
		assert.Equal(t, 1, hold.Released())
		assert.Empty(t, d.Events(), "RegisterRegions was never called")
	})
	for name, fail := range map[string]error{
		"2 refused":                  fmt.Errorf("%w: %w: overlapping", contract.ErrDriverRejected, contract.ErrInvalidRegion),
		"3 failed with nothing live": &contract.RegistrationError{Err: errors.New("rpc failed before commit")},
	} {
		t.Run(name, func(t *testing.T) {
			d := newFakeTogether(getPut)
			d.registerRegions = func([]contract.RegionSpec) (contract.Registration, error) { return 0, fail }
			hold := &countingHold{}
			_, err := Bind(d, regions, hold)
			require.ErrorIs(t, err, contract.ErrConstructionRejected)
			require.ErrorIs(t, err, fail)
			assert.Equal(t, 1, hold.Released())
			assert.Zero(t, d.LiveBatches())
		})
	}
	t.Run("4 failed with a possibly live handle", func(t *testing.T) {
		d := newFakeTogether(getPut)
		d.registerRegions = func([]contract.RegionSpec) (contract.Registration, error) {
			return 9, &contract.RegistrationError{Registration: 9, Err: errors.New("commit ack lost")}
		}
		d.refuseTogether = 2
		hold := &countingHold{log: d.fakeDriver}
		_, err := Bind(d, regions, hold)
		require.ErrorIs(t, err, ErrRegistrationMayBeLive)
		var live *LiveRegistrationError
		require.ErrorAs(t, err, &live)
		assert.Equal(t, []string{"region 0", "region 2"}, live.Held)
		assert.Zero(t, hold.Released(), "kept until the handle is revoked")
		assert.Equal(t, 1, d.LiveBatches())

		synctest.Test(t, func(t *testing.T) {
			require.NoError(t, live.Unbind(context.Background()))
		})
		assert.Zero(t, d.LiveBatches())
		assert.Equal(t, 1, hold.Released())
		assert.Equal(t, []string{"unregister-regions 9 refused", "unregister-regions 9 refused", "unregister-regions 9", "release"},
			d.Events()[1:], "a refused revocation is retried, and the hold goes after it")
	})
	t.Run("4 any other error", func(t *testing.T) {
		d := newFakeTogether(getPut)
		d.registerRegions = func([]contract.RegionSpec) (contract.Registration, error) { return 0, errors.New("broken pipe") }
		hold := &countingHold{}
		_, err := Bind(d, regions, hold)
		var live *LiveRegistrationError
		require.ErrorAs(t, err, &live)
		assert.Equal(t, []string{"region 0 (no handle)", "region 2 (no handle)"}, live.Held)
		require.ErrorIs(t, live.Unbind(context.Background()), ErrRegistrationMayBeLive)
		assert.Zero(t, hold.Released())
	})
	t.Run("a busy region keeps the whole batch registered", func(t *testing.T) {
		d := newFakeTogether(getPut)
		hold := &countingHold{}
		r, err := Bind(d, regions, hold)
		require.NoError(t, err)
		d.refuseTogether = 1 << 30
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := r.Unbind(ctx)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.ErrorContains(t, err, "region 0, region 2 still registered")
		})
		assert.Equal(t, []string{"region 0", "region 2"}, r.Held())
		assert.Equal(t, 1, d.LiveBatches())
		assert.Zero(t, hold.Released())
	})
}

func TestUnbindRetriesABusyRegionUntilItIsFree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newFake(getPut)
		hold := &countingHold{log: d}
		r, err := Bind(d, []contract.SlotRegion{fakeRegion(0, contract.Host), fakeRegion(1, contract.Host)}, hold)
		require.NoError(t, err)
		d.refuseUnregister = 5

		start := time.Now()
		require.NoError(t, r.Unbind(context.Background()))
		assert.Equal(t, 1, hold.Released())
		assert.Zero(t, d.Live())
		ev := d.Events()
		assert.Equal(t, "release", ev[len(ev)-1], "released after every region is confirmed unregistered")
		refused := 0
		for _, e := range ev {
			if e == "unregister 1 refused" || e == "unregister 2 refused" {
				refused++
			}
		}
		assert.Equal(t, 5, refused, "every refusal was asked again, none skipped")
		// passes at 0, 1, 3, 7 ms: the pause doubles
		assert.Equal(t, 7*time.Millisecond, time.Since(start))
	})
}

func TestUnbindGivesUpWithCtxAndNamesWhatIsHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newFake(getPut)
		hold := &countingHold{}
		r, err := Bind(d, []contract.SlotRegion{fakeRegion(0, contract.Host), fakeRegion(1, contract.Host)}, hold)
		require.NoError(t, err)
		d.mu.Lock()
		delete(d.live, 2) // the fake now answers "unknown" for region 1: never confirmed
		d.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = r.Unbind(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorContains(t, err, "region 1 still registered")
		assert.Equal(t, []string{"region 1"}, r.Held())
		assert.Zero(t, hold.Released())
		_, err = New(r, Config{KeyPrefix: "p"})
		require.ErrorIs(t, err, ErrConfig, "region 0 is no longer registered: no backend may serve it")
	})
}

func TestUnbindIsRefusedWhileABackendOwnsTheRegions(t *testing.T) {
	d := newFake(getPut)
	b, hold := fakeBackend(t, d, 1, Config{})
	_, err := b.Publish(rowsView(1), nil)
	require.NoError(t, err)
	before := d.Events()

	err = b.Regions().Unbind(context.Background())
	require.ErrorIs(t, err, ErrOwned)
	assert.Equal(t, before, d.Events(), "the driver was not asked")
	assert.Zero(t, hold.Released())
	assert.Equal(t, []string{"region 0"}, b.Regions().Held())

	d.Ops()[0].finish(contract.Ended, contract.Ready)
	assert.Nil(t, b.Shutdown(context.Background()), "the backend unbinds the regions itself")
	assert.Equal(t, 1, hold.Released())
	require.ErrorIs(t, b.Regions().Unbind(context.Background()), ErrOwned, "still the backend's")
}

func TestNewRefusesRegionsOnceUnbindWasCalled(t *testing.T) {
	d := newFake(getPut)
	r, err := Bind(d, []contract.SlotRegion{fakeRegion(0, contract.Host)}, &countingHold{})
	require.NoError(t, err)
	require.NoError(t, r.Unbind(context.Background()))
	_, err = New(r, Config{KeyPrefix: "p"})
	require.ErrorIs(t, err, ErrConfig)
	assert.ErrorContains(t, err, "Unbind was called")
}
