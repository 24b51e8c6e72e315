package fakesdk

import (
	"fmt"
	"slices"
)

// keyHold is a gate set by [Store.HoldKeys]: the calls of op carrying one
// of keys wait at it.
type keyHold struct {
	op   Op
	keys []string
	gate *Gate
}

// HoldKeys makes every later put, get or exist call (op) that carries one
// of keys wait at the returned gate as it arrives, before the store looks
// at it: it is not counted in [Store.Calls] yet, no fault has struck it,
// no key is claimed and no answer fixed, until the gate opens; then it
// runs as any call does. A call carries every key of its batch, so the
// gate holds the other keys of such a call too ([Gate.Holding] says which
// keys a held call carries). A call that carries keys of several such
// gates waits at each: it reaches all of them, then waits until all are
// open. It refuses an op other than Put, Get and Exist, and no keys
// ([ErrScript]).
func (s *Store) HoldKeys(op Op, keys ...string) (*Gate, error) {
	switch {
	case !op.data():
		return nil, fmt.Errorf("%w: HoldKeys holds put, get and exist calls, not %v", ErrScript, op)
	case len(keys) == 0:
		return nil, fmt.Errorf("%w: HoldKeys of no keys", ErrScript)
	}
	h := &keyHold{op: op, keys: slices.Clone(keys), gate: NewGate()}
	s.mu.Lock()
	s.holds = append(s.holds, h)
	s.mu.Unlock()
	return h.gate, nil
}

// waitAtHolds holds a call of op carrying keys at every gate of HoldKeys
// naming one of them: the call reaches each, then waits until each is
// open.
func (s *Store) waitAtHolds(op Op, keys []string) {
	s.mu.Lock()
	var gates []*Gate
	for _, h := range s.holds {
		if h.op == op && slices.ContainsFunc(keys, func(k string) bool { return slices.Contains(h.keys, k) }) {
			gates = append(gates, h.gate)
		}
	}
	s.mu.Unlock()
	for _, g := range gates {
		g.wait(keys)
	}
	for _, g := range gates {
		<-g.open
	}
	for _, g := range gates {
		g.leave(keys)
	}
}
