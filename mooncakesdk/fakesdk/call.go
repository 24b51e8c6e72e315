package fakesdk

import (
	"fmt"
	"time"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// entry is one distinct key of a call. A key given twice is served once,
// from its last buffer and size, and every index holding it gets the
// same answer: what the real store does with duplicates.
type entry struct {
	key   string
	last  int   // the index whose buffer and size serve the key
	index []int // every index holding the key
	code  mooncakesdk.Code
	fault *scripted // the per-key fault answering for the key, if any

	claimed bool   // put: the key is ours to store
	obj     []byte // get: the object to write
}

// answer is the entry's answer: the fault's code, else the store's.
func (e *entry) answer() mooncakesdk.Code {
	if e.fault != nil {
		return e.fault.Code
	}
	return e.code
}

// call is one data or control call with the faults that strike it.
type call struct {
	op      Op
	entries []*entry
	fail    *scripted
	panic   *scripted
	hold    *scripted
	code    *scripted // register, unregister, health: the function's answer
	latency time.Duration
}

// begin counts the call and picks its faults.
func (s *Store) begin(op Op, keys []string) *call {
	c := &call{op: op}
	if op.data() {
		c.latency = s.opts.Latency
	}
	byKey := map[string]*entry{}
	for i, k := range keys {
		e, ok := byKey[k]
		if !ok {
			e = &entry{key: k}
			byKey[k] = e
			c.entries = append(c.entries, e)
		}
		e.last = i
		e.index = append(e.index, i)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	s.count(op)
	for _, f := range s.faults {
		if f.Op != op || f.left == 0 {
			continue
		}
		if f.callLevel() || !op.data() {
			if f.Key != "" && byKey[f.Key] == nil {
				continue
			}
			slot := &c.code
			switch {
			case f.Fail:
				slot = &c.fail
			case f.Panic:
				slot = &c.panic
			case f.Hold != nil:
				slot = &c.hold
			}
			if *slot == nil {
				*slot = f
				f.strike()
			}
			continue
		}
		struck := false
		for _, e := range c.entries {
			if e.fault == nil && (f.Key == "" || f.Key == e.key) {
				e.fault = f
				struck = true
			}
		}
		if struck {
			f.strike()
		}
	}
	return c
}

// dataCall runs a put, get or exist call through the steps they share:
// the argument check's verdict argErr, the client's call lock, the
// call-level faults before the data, arrive for each distinct key under
// the store's lock (the store's state as the call finds it: its answer,
// a put's claim), the hold and the latency, land for each key without
// the lock (the data moving), the call-level faults after the data, and
// answer for every index of the call.
func (c *Client) dataCall(op Op, keys []string, argErr error, arrive, land func(*entry), answer func(i int, code mooncakesdk.Code)) error {
	if argErr != nil {
		return argErr
	}
	if !c.enter() {
		return mooncakesdk.ErrClosed
	}
	defer c.mu.RUnlock()
	if len(keys) == 0 {
		return nil // the real binding makes no call for no keys
	}
	s := c.store
	cl := s.begin(op, keys)
	if err := cl.strike(BeforeLanding); err != nil {
		return err
	}
	s.mu.Lock()
	for _, e := range cl.entries {
		arrive(e)
	}
	s.mu.Unlock()
	cl.wait()
	for _, e := range cl.entries {
		land(e)
	}
	if err := cl.strike(AfterLanding); err != nil {
		return err
	}
	for _, e := range cl.entries {
		for _, i := range e.index {
			answer(i, e.answer())
		}
	}
	return nil
}

// controlCall runs a register, unregister or health call: the client's
// call lock, the call-level faults placed before the call's effect, the
// hold, a scripted answer placed before the effect (which then never
// happens), effect (the call's own work and answer), then the faults and
// a scripted answer placed after it. A scripted answer replaces
// effect's.
func (c *Client) controlCall(op Op, effect func() error) error {
	if !c.enter() {
		return mooncakesdk.ErrClosed
	}
	defer c.mu.RUnlock()
	cl := c.store.begin(op, nil)
	if err := cl.strike(BeforeLanding); err != nil {
		return err
	}
	cl.wait()
	if cl.code != nil && cl.code.Phase == BeforeLanding {
		return op.answer(cl.code.Code)
	}
	err := effect()
	if err := cl.strike(AfterLanding); err != nil {
		return err
	}
	if cl.code != nil {
		return op.answer(cl.code.Code)
	}
	return err
}

// strike applies the call-level faults of phase p: a panic, or a failure
// returned as the library's -1.
func (c *call) strike(p Phase) error {
	if c.panic != nil && c.panic.Phase == p {
		panic(fmt.Sprintf("fakesdk: scripted panic in %v (%s)", c.op, phaseWords(p)))
	}
	if c.fail != nil && c.fail.Phase == p {
		return &mooncakesdk.CallError{Func: c.op.cFunc(), Code: mooncakesdk.InternalError}
	}
	return nil
}

// wait holds the call at its gate, if scripted, then adds the latency.
func (c *call) wait() {
	if c.hold != nil {
		c.hold.Hold.pass()
	}
	if c.latency > 0 {
		time.Sleep(c.latency)
	}
}

func phaseWords(p Phase) string {
	if p == AfterLanding {
		return "after landing"
	}
	return "before landing"
}
