package broken_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// The scenes of Recycle (contract.Recycler), for the recycle rules: the
// main script makes none.
func init() { scenes = append(scenes, recycleScenes...) }

// recycle calls the scene driver's Recycle with ctx.
func (s *stage) recycle(ctx context.Context) error {
	return s.drv.(contract.Recycler).Recycle(ctx)
}

// gotten starts a get of rs and notes its answer under label.
func (s *stage) gotten(label string, onChange func(), rs ...contract.Row) contract.Operation {
	op, err := call(func() (contract.Operation, error) { return s.drv.Get(rows(rs...), nil, onChange) })
	s.note(label, answer(op, err))
	return op
}

// unprovable stores keys and makes their gets leave the transfer
// running (memdrv's UnprovableGets), and returns one row a key, in
// slots 0 on.
func (s *stage) unprovable(keys ...string) []contract.Row {
	var rs []contract.Row
	for i, k := range keys {
		s.store.Set(k, object(slotBytes))
		s.inner.UnprovableGets(k)
		rs = append(rs, s.row(i, k))
	}
	return rs
}

var recycleScenes = []scene{
	// An unprovable get of three rows, recycled; then its three
	// transfers run to their end.
	{"recycle-strays", func(s *stage) {
		op := s.gotten("answer", nil, s.unprovable("s0", "s1", "s2")...)
		if op == nil {
			return
		}
		synctest.Wait()
		s.note("recycle", errText(s.recycle(context.Background())))
		s.note("access", op.Poll(nil).Access)
		s.note("finished", s.inner.FinishStrays())
		s.note("memory", s.memory())
	}},
	// What a Poll from inside each onChange made during a Recycle of an
	// unprovable get reads.
	{"recycle-callbacks", func(s *stage) {
		var recycling atomic.Bool
		var op contract.Operation
		var seen []contract.Access
		op = s.gotten("answer", func() {
			if recycling.Load() {
				seen = append(seen, op.Poll(nil).Access)
			}
		}, s.unprovable("c")...)
		if op == nil {
			return
		}
		synctest.Wait()
		recycling.Store(true)
		s.note("recycle", errText(s.recycle(context.Background())))
		recycling.Store(false)
		s.note("seen", fmt.Sprint(seen))
	}},
	// A Recycle whose context ends while a put is held in the store and
	// a get is unprovable.
	{"recycle-gives-up", func(s *stage) {
		u := s.gotten("get-answer", nil, s.unprovable("g")...)
		gate := s.inner.Hold(memdrv.PutDir)
		defer gate.Release()
		copy(s.mem.Slot(1), object(slotBytes))
		held, err := call(func() (contract.Operation, error) { return s.drv.Put(rows(s.row(1, "held")), nil) })
		s.note("put-answer", answer(held, err))
		if u == nil || held == nil {
			if u != nil {
				synctest.Wait()
				require.NoError(s.t, s.inner.Recycle(context.Background()))
			}
			return
		}
		require.NoError(s.t, gate.Held(s.t.Context()))
		ctx, cancel := context.WithTimeout(s.t.Context(), time.Second)
		s.note("recycle", errText(s.recycle(ctx)))
		cancel()
		s.note("unprovable", u.Poll(nil).Access)
		gate.Release()
		synctest.Wait()
		// The owner's cleanup needs the access ended: the wrapped
		// driver's Recycle, which knows the truth.
		require.NoError(s.t, s.inner.Recycle(context.Background()))
	}},
	// Recycle once the driver is closed.
	{"recycle-after-close", func(s *stage) {
		s.note("drain", s.drv.Drain(context.Background()))
		s.note("unregister", errText(s.drv.Unregister(s.reg)))
		s.note("close", errText(s.drv.Close()))
		s.note("recycle", errText(s.recycle(context.Background())))
	}},
	// Unregister of an idle region while a Recycle waits for a get held
	// in the store.
	{"recycle-during", func(s *stage) {
		other := paint(s.t, slotBytes, 1)
		reg, err := s.drv.Register(other.Region)
		require.NoError(s.t, err)
		defer func() {
			require.NoError(s.t, s.inner.Unregister(reg), "idle: revoked in the wrapped driver")
			require.NoError(s.t, other.Free())
		}()
		s.store.Set("h", object(slotBytes))
		gate := s.inner.Hold(memdrv.GetDir)
		defer gate.Release()
		if s.gotten("answer", nil, s.row(0, "h")) == nil {
			return
		}
		require.NoError(s.t, gate.Held(s.t.Context()))
		done := make(chan error, 1)
		go func() { done <- s.recycle(context.Background()) }()
		synctest.Wait()
		s.note("unregister", errText(s.drv.Unregister(reg)))
		gate.Release()
		s.note("recycle", errText(<-done))
		synctest.Wait()
	}},
}
