package broken_test

import (
	"context"
	"errors"
	"fmt"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// The scenes of batches of regions, failed registrations, Unprovable
// over time and Capabilities: the main script makes none.
func init() { scenes = append(scenes, elsewhereScenes...) }

// registration describes how a registration failed: whether the error
// carries a handle that may be live, and whether it wraps
// ErrDriverRejected.
func registration(err error) string {
	var re *contract.RegistrationError
	live := errors.As(err, &re) && re.MayBeLive()
	return fmt.Sprintf("may be live: %v, rejected: %v", live, errors.Is(err, contract.ErrDriverRejected))
}

// revokeFailed revokes what a failed registration may have left live,
// through the handle it carried, else through a Drain of the scene's
// driver (a driver that kept it without saying so revokes it then).
func (s *stage) revokeFailed(err error, revoke func(contract.Registration) error) {
	var re *contract.RegistrationError
	if errors.As(err, &re) && re.MayBeLive() {
		require.NoError(s.t, revoke(re.Registration))
		return
	}
	require.True(s.t, s.drv.Drain(context.Background()))
}

var elsewhereScenes = []scene{
	// Unregister of a batch of three regions while a get in its first
	// region waits unstarted.
	{"together-busy", func(s *stage) {
		rt := s.drv.(contract.RegionsTogether)
		var mems []*memdrv.Memory
		var specs []contract.RegionSpec
		for _, label := range []string{"first", "middle", "last"} {
			m := paint(s.t, slotBytes, 1)
			mems = append(mems, m)
			specs = append(specs, contract.RegionSpec{Label: label, Region: m.Region})
		}
		reg, err := rt.RegisterRegions(specs)
		require.NoError(s.t, err)
		s.store.Set("busy", object(slotBytes))
		resume := s.inner.Pause()
		s.get(nil, contract.Row{Name: []byte("busy"), Spans: []contract.Span{mems[0].Region.Slot(0)}})
		s.note("unregister", errText(rt.UnregisterRegions(reg)))
		resume()
		synctest.Wait()
		require.NoError(s.t, rt.UnregisterRegions(reg), "idle now")
		for _, m := range mems {
			require.NoError(s.t, m.Free())
		}
	}},
	// A registration the store fails in a way that may leave it live.
	{"register-live", func(s *stage) {
		mem := paint(s.t, slotBytes, 1)
		s.inner.FailNextRegister(&contract.RegistrationError{Registration: 1, Err: errors.New("the store's answer was lost")})
		_, err := s.drv.Register(mem.Region)
		s.note("error", registration(err))
		s.revokeFailed(err, s.drv.Unregister)
		require.NoError(s.t, mem.Free())
	}},
	// The same for a batch of regions.
	{"register-live-together", func(s *stage) {
		rt := s.drv.(contract.RegionsTogether)
		mem := paint(s.t, slotBytes, 1)
		(&memdrv.TogetherDriver{Driver: s.inner}).FailNextRegistration(true)
		_, err := rt.RegisterRegions([]contract.RegionSpec{{Label: "a", Region: mem.Region}})
		s.note("error", registration(err))
		s.revokeFailed(err, rt.UnregisterRegions)
		require.NoError(s.t, mem.Free())
	}},
	// An unprovable get, polled at once and after two seconds; a Recycle
	// of the wrapped driver ends it.
	{"unprovable-later", func(s *stage) {
		s.store.Set("u", object(slotBytes))
		s.inner.UnprovableGets("u")
		defer func() { require.NoError(s.t, s.inner.Recycle(context.Background())) }()
		op := s.get(nil, s.row(0, "u"))
		if op == nil {
			return
		}
		synctest.Wait()
		s.note("access", op.Poll(nil).Access)
		time.Sleep(2 * time.Second)
		s.note("access-after-wait", op.Poll(nil).Access)
	}},
	// Capabilities after a Recycle of the wrapped driver.
	{"caps-after-recycle", func(s *stage) {
		require.NoError(s.t, s.inner.Recycle(context.Background()))
		s.note("caps", s.drv.Capabilities())
	}},
	// Capabilities once a get's store call crashed.
	{"caps-after-crash", func(s *stage) {
		s.inner.Crash(memdrv.GetDir)
		s.get(nil, s.row(0, "crashing"))
		synctest.Wait()
		s.note("caps", s.drv.Capabilities())
	}},
}
