package broken_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/internal/testkeys"
)

// A scene is one more step of the differential script, on a driver and a
// region of its own (so that what it does to the driver, a Drain say,
// leaves the rest of the script alone), for the rules the main script
// does not reach. Each records its observations under its name, and ends
// with the owner's cleanup done on the wrapped driver, which knows the
// truth.
type scene struct {
	name  string
	stage func(s *stage)
}

// stage is what a scene works with.
type stage struct {
	t     *testing.T
	tr    trace
	name  string
	drv   contract.Driver
	inner *memdrv.Driver
	store *memdrv.Store
	mem   *memdrv.Memory
	reg   contract.Registration
}

func (s *stage) row(slot int, name string) contract.Row {
	return contract.Row{Name: []byte(name), Spans: []contract.Span{s.mem.Region.Slot(slot)}}
}

func (s *stage) put(onChange func(), r ...contract.Row) contract.Operation {
	op, err := call(func() (contract.Operation, error) { return s.drv.Put(rows(r...), onChange) })
	s.note("answer", answer(op, err))
	return op
}

func (s *stage) get(onChange func(), r ...contract.Row) contract.Operation {
	op, err := call(func() (contract.Operation, error) { return s.drv.Get(rows(r...), nil, onChange) })
	s.note("answer", answer(op, err))
	return op
}

// note records an observation of the scene.
func (s *stage) note(label string, v any) { s.tr[s.name+"/"+label] = fmt.Sprint(v) }

// rows notes the statuses of op under label, if there is an operation.
func (s *stage) rows(label string, op contract.Operation) {
	if op != nil {
		s.note(label, op.Poll(nil).Rows)
	}
}

func (s *stage) memory() string { return fmt.Sprintf("%x", sha256.Sum256(s.mem.Bytes)) }

func (s *stage) fill(slot int, b byte) {
	for i := range s.mem.Slot(slot) {
		s.mem.Slot(slot)[i] = b
	}
}

// run runs the scene on a fresh driver that b builds and a fresh region
// of four slots, then cleans up through the wrapped driver.
func (sc scene) run(t *testing.T, b build, tr trace) {
	drv, inner, store := b()
	s := &stage{t: t, tr: tr, name: sc.name, drv: drv, inner: inner, store: store, mem: paint(t, slotBytes, 4)}
	var err error
	s.reg, err = drv.Register(s.mem.Region)
	require.NoError(t, err)
	sc.stage(s)
	synctest.Wait()
	require.True(t, inner.Drain(context.Background()), "%s: every access ended", sc.name)
	require.NoError(t, inner.Unregister(s.reg))
	require.NoError(t, s.mem.Free())
}

var scenes = []scene{
	// A get's memory reused once a Poll said its access ended, and the
	// driver called again.
	{"after-end-get", func(s *stage) {
		s.store.Set("e", object(slotBytes))
		op := s.get(nil, s.row(0, "e"))
		synctest.Wait()
		s.rows("rows", op)
		s.fill(0, fillByte)
		s.rows("rows-again", op)
		s.note("memory", s.memory())
	}},
	// A put's memory reused once a Poll said its access ended, and the
	// driver called again.
	{"after-end-put", func(s *stage) {
		copy(s.mem.Slot(0), object(slotBytes))
		op := s.put(nil, s.row(0, "p"))
		synctest.Wait()
		s.rows("rows", op)
		s.fill(0, 0x55)
		s.rows("rows-again", op)
		obj, ok := s.store.Object("p")
		s.note("store", fmt.Sprintf("%v %x", ok, sha256.Sum256(obj)))
	}},
	// Cancel of a get running in the store, then let go.
	{"cancel-running", func(s *stage) {
		s.store.Set("c", object(slotBytes))
		gate := s.inner.Hold(memdrv.GetDir)
		defer gate.Release()
		op := s.get(nil, s.row(0, "c"))
		if op == nil {
			return
		}
		require.NoError(s.t, gate.Held(s.t.Context()))
		op.Cancel()
		s.note("access", op.Poll(nil).Access)
		gate.Release()
		synctest.Wait()
		s.rows("rows", op)
		s.note("memory", s.memory())
	}},
	// Unregister while the region's only operation waits unstarted.
	{"queued-unregister", func(s *stage) {
		resume := s.inner.Pause()
		s.get(nil, s.row(0, "q"))
		s.note("unregister", errText(s.drv.Unregister(s.reg)))
		resume()
	}},
	// A worker held inside onChange: Drain with its context ended, a put
	// after it, and Close once every region is unregistered.
	{"callback-drain", func(s *stage) {
		let := make(chan struct{})
		var first atomic.Bool
		s.put(func() {
			if first.CompareAndSwap(false, true) {
				<-let
			}
		}, s.row(0, "b"))
		synctest.Wait()
		s.note("drain", s.drv.Drain(ended()))
		s.put(nil, s.row(1, "after"))
		close(let)
		synctest.Wait()
		s.note("unregister", errText(s.drv.Unregister(s.reg)))
		s.note("close", errText(s.drv.Close()))
	}},
	// A get of a stored key and an absent one.
	{"mixed", func(s *stage) {
		s.store.Set("m", object(slotBytes))
		op := s.get(nil, s.row(0, "m"), s.row(1, "absent"))
		synctest.Wait()
		s.rows("rows", op)
	}},
	// A second put of a key while the first is held in the store.
	{"second-put", func(s *stage) {
		copy(s.mem.Slot(0), object(slotBytes))
		copy(s.mem.Slot(1), object(slotBytes))
		gate := s.inner.Hold(memdrv.PutDir)
		defer gate.Release()
		if s.put(nil, s.row(0, "k")) == nil {
			return
		}
		require.NoError(s.t, gate.Held(s.t.Context()))
		op := s.put(nil, s.row(1, "k"))
		synctest.Wait()
		s.rows("rows", op)
	}},
	// Callbacks in the second after a Drain that returned true.
	{"late-callbacks", func(s *stage) {
		called := new(counter)
		s.put(called.inc, s.row(0, "l"))
		synctest.Wait()
		s.note("drain", s.drv.Drain(context.Background()))
		before := called.get()
		time.Sleep(time.Second)
		synctest.Wait()
		s.note("count", called.get()-before)
	}},
	// Callbacks that poll (waiting a second at most) while Drain cancels
	// the rows no worker took.
	{"drain-lock", func(s *stage) {
		resume := s.inner.Pause()
		defer resume()
		var op contract.Operation
		stuck := new(counter)
		op = s.get(func() {
			if op == nil {
				return
			}
			polled := make(chan struct{})
			go func() {
				op.Poll(nil)
				close(polled)
			}()
			select {
			case <-polled:
			case <-time.After(time.Second):
				stuck.inc()
			}
		}, s.row(0, "d"))
		s.note("drain", s.drv.Drain(context.Background()))
		s.note("stuck", stuck.get())
	}},
	// Unregister of a region only the second row of an operation covers,
	// while the operation waits unstarted.
	{"later-row", func(s *stage) {
		other := paint(s.t, slotBytes, 1)
		reg, err := s.drv.Register(other.Region)
		require.NoError(s.t, err)
		resume := s.inner.Pause()
		later := contract.Row{Name: []byte("later"), Spans: []contract.Span{other.Region.Slot(0)}}
		s.get(nil, s.row(0, "first"), later)
		s.note("unregister", errText(s.drv.Unregister(reg)))
		resume()
		synctest.Wait()
		require.NoError(s.t, s.inner.Unregister(reg), "idle now, in the wrapped driver")
		require.NoError(s.t, other.Free())
	}},
	// A Drain whose context ends while a put is held in the store, and a
	// put after it.
	{"deadline-drain", func(s *stage) {
		copy(s.mem.Slot(0), object(slotBytes))
		gate := s.inner.Hold(memdrv.PutDir)
		defer gate.Release()
		if s.put(nil, s.row(0, "d")) == nil {
			return
		}
		require.NoError(s.t, gate.Held(s.t.Context()))
		ctx, cancel := context.WithTimeout(s.t.Context(), time.Second)
		s.note("drain", s.drv.Drain(ctx))
		cancel()
		_, err := call(func() (contract.Operation, error) { return s.drv.Put(rows(s.row(1, "after")), nil) })
		s.note("after", answer(nil, err))
		gate.Release()
	}},
	// A failed read while the other row of the get is held in the store.
	{"sibling-fault", func(s *stage) {
		s.store.Set("held", object(slotBytes))
		s.store.Set("failing", object(slotBytes))
		s.inner.FailReads("failing")
		gate := s.inner.HoldKeys(memdrv.GetDir, "held")
		defer gate.Release()
		op := s.get(nil, s.row(0, "held"), s.row(1, "failing"))
		if op == nil {
			return
		}
		require.NoError(s.t, gate.Held(s.t.Context()))
		synctest.Wait()
		s.note("access", op.Poll(nil).Access)
		gate.Release()
		synctest.Wait()
		s.rows("rows", op)
	}},
	// Keys built after a put's access ended and a Drain.
	{"names-late", func(s *stage) {
		keys := &countingKeys{}
		copy(s.mem.Slot(0), object(slotBytes))
		op, err := call(func() (contract.Operation, error) {
			return s.drv.Put(contract.RowBatch{Keys: keys, Rows: []contract.Row{s.row(0, "n")}}, nil)
		})
		s.note("answer", answer(op, err))
		if op == nil {
			return
		}
		synctest.Wait()
		s.rows("rows", op)
		before := keys.n.Load()
		s.note("drain", s.drv.Drain(context.Background()))
		s.note("keys-after-end", keys.n.Load()-before)
	}},
	// Cancel of every operation after a Drain that returned true.
	{"cancel-after-drain", func(s *stage) {
		called := new(counter)
		copy(s.mem.Slot(0), object(slotBytes))
		op := s.put(called.inc, s.row(0, "c"))
		if op == nil {
			return
		}
		synctest.Wait()
		s.note("drain", s.drv.Drain(context.Background()))
		before := called.get()
		op.Cancel()
		synctest.Wait()
		s.note("late-callbacks", called.get()-before)
	}},
}

// countingKeys is the tests' key maker (testkeys.Plain) counting every
// key it builds.
type countingKeys struct{ n atomic.Int64 }

func (k *countingKeys) KeyLen(n int) int { return testkeys.Plain{}.KeyLen(n) }

func (k *countingKeys) AppendKey(dst, name []byte) []byte {
	k.n.Add(1)
	return testkeys.Plain{}.AppendKey(dst, name)
}
