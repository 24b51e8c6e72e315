package memdrv

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// TransferGate holds drivers' rows inside the store, half way through
// their transfer (see [Store.HoldTransfers]). Its methods are safe for
// concurrent use.
type TransferGate struct {
	s    *Store
	dir  Direction
	keys map[string]struct{} // nil: every key

	arriveOnce  sync.Once
	arrived     chan struct{} // closed when the first row stops at the gate
	releaseOnce sync.Once
	released    chan struct{} // closed by Release
}

// HoldTransfers makes every later driver row in dir of one of keys
// (store keys; none given: every key) stop inside the store until the
// gate is released: a get once it holds the object, before it copies a
// byte (the object is being read: never evicted, its memory never
// reused), a put once it holds its memory, before it copies a byte (the
// object is being written: its key NotReady, never evicted). Unlike
// [Driver.Hold], the row has reached the store; its access stays Open,
// and Cancel does not end it. It panics if dir is not PutDir or GetDir.
func (s *Store) HoldTransfers(dir Direction, keys ...string) *TransferGate {
	mustBeValid(dir)
	g := &TransferGate{s: s, dir: dir, arrived: make(chan struct{}), released: make(chan struct{})}
	if len(keys) > 0 {
		g.keys = addKeys(nil, keys)
	}
	s.mu.Lock()
	s.gates = append(s.gates, g)
	s.gated.Add(1)
	s.mu.Unlock()
	return g
}

// Held waits until at least one row has stopped at the gate, or ctx
// ends; then it returns an error wrapping ctx's.
func (g *TransferGate) Held(ctx context.Context) error {
	select {
	case <-g.arrived:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("memdrv: no %s row stopped inside the store: %w", g.dir, ctx.Err())
	}
}

// Release lets every row stopped at the gate go on and stops holding.
// It is idempotent.
func (g *TransferGate) Release() {
	g.releaseOnce.Do(func() {
		s := g.s
		s.mu.Lock()
		if i := slices.Index(s.gates, g); i >= 0 {
			s.gates = slices.Delete(s.gates, i, i+1)
			s.gated.Add(-1)
		}
		s.mu.Unlock()
		close(g.released)
	})
}

// midway stops a driver's row of key in dir at a gate that holds it,
// until the gate is released.
func (s *Store) midway(dir Direction, key string) {
	if s.gated.Load() == 0 {
		return
	}
	s.mu.Lock()
	var at *TransferGate
	for _, g := range s.gates {
		if _, ok := g.keys[key]; g.dir == dir && (g.keys == nil || ok) {
			at = g
			break
		}
	}
	s.mu.Unlock()
	if at != nil {
		at.arriveOnce.Do(func() { close(at.arrived) })
		<-at.released
	}
}
