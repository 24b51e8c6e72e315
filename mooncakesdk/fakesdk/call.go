package fakesdk

import (
	"fmt"
	"time"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// entry is one index of a call: its key, checked against its own buffer
// and size. A put's later copy of a key (repeat) answers 0 and touches
// nothing, whatever happened to the first copy: what the real store
// does with a key given twice.
type entry struct {
	key    string
	index  int
	repeat bool // put: a later copy of a key an earlier index holds
	code   mooncakesdk.Code
	fault  *scripted // the per-key fault answering for the entry, if any

	claim *claim // put: the key is ours to store
	obj   []byte // get: the object to write
}

// answer is the entry's answer: 0 for a repeat, else the fault's code,
// else the store's.
func (e *entry) answer() mooncakesdk.Code {
	switch {
	case e.repeat:
		return mooncakesdk.OK
	case e.fault != nil:
		return e.fault.Code
	}
	return e.code
}

// call is one data or control call with the faults that strike it.
type call struct {
	op      Op
	entries []*entry
	keys    []string // the call's distinct keys
	fail    *scripted
	panic   *scripted
	hold    *scripted
	vanish  *scripted
	code    *scripted // register, unregister, health: the function's answer
	latency time.Duration
	stuck   time.Duration // the transfer timeout, when a transfer is stuck (Running)
}

// begin counts the call and picks its faults.
func (s *Store) begin(op Op, keys []string) *call {
	c := &call{op: op}
	if op.data() {
		c.latency = s.opts.Latency
	}
	seen := make(map[string]bool, len(keys))
	for i, k := range keys {
		c.entries = append(c.entries, &entry{key: k, index: i, repeat: op == Put && seen[k]})
		if !seen[k] {
			seen[k] = true
			c.keys = append(c.keys, k)
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	s.count(op)
	for _, f := range s.faults {
		if f.Op != op || f.spent() {
			continue
		}
		if f.callLevel() || !op.data() {
			if f.Key != "" && !seen[f.Key] {
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
			case f.Vanish:
				slot = &c.vanish
			}
			if *slot == nil {
				*slot = f
				f.strike()
			}
			continue
		}
		struck := false
		for _, e := range c.entries {
			if !e.repeat && e.fault == nil && (f.Key == "" || f.Key == e.key) {
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

// vanishKeys are the keys the call's Vanish fault drops: its Key, or
// every key of the call.
func (c *call) vanishKeys() []string {
	if c.vanish.Key != "" {
		return []string{c.vanish.Key}
	}
	return c.keys
}

// dataCall runs a put, get or exist call through the steps they share:
// the argument check's verdict argErr, the client's call guard, the
// call-level faults before the data, a Vanish placed before it, arrive
// for each entry but a put's repeats under the store's lock (the store's
// state as the call finds it: its answer, a put's claim), the hold, the
// latency and a stuck transfer's timeout, land for each such entry
// without the lock (the data moving), a Vanish placed after the data,
// the call-level faults after the data, and answer for every index of
// the call.
func (c *Client) dataCall(op Op, keys *mooncakesdk.KeyList, argErr error, arrive, land func(*entry), answer func(i int, code mooncakesdk.Code)) error {
	if argErr != nil {
		return argErr
	}
	if err := c.guard.Enter(); err != nil {
		return err
	}
	defer c.guard.Leave()
	if keys.Len() == 0 {
		return nil // the real binding makes no call for no keys
	}
	s := c.store
	ks := keyStrings(keys)
	s.waitAtHolds(op, ks)
	cl := s.begin(op, ks)
	if err := cl.strike(BeforeLanding); err != nil {
		return err
	}
	s.mu.Lock()
	if cl.vanish != nil && cl.vanish.Phase == BeforeLanding {
		s.vanish(cl.vanishKeys())
	}
	for _, e := range cl.entries {
		if !e.repeat {
			arrive(e)
		}
		if e.fault != nil && e.fault.Running != nil && (e.claim != nil || e.obj != nil) {
			cl.stuck = s.opts.transferTimeout()
		}
	}
	s.mu.Unlock()
	cl.wait()
	for _, e := range cl.entries {
		if !e.repeat {
			land(e)
		}
	}
	if cl.vanish != nil && cl.vanish.Phase == AfterLanding {
		s.Vanish(cl.vanishKeys()...)
	}
	if err := cl.strike(AfterLanding); err != nil {
		return err
	}
	for _, e := range cl.entries {
		answer(e.index, e.answer())
	}
	return nil
}

// keyStrings copies a list's keys out as strings, the fake's map keys.
func keyStrings(l *mooncakesdk.KeyList) []string {
	out := make([]string, l.Len())
	for i := range out {
		out[i] = string(l.Key(i))
	}
	return out
}

// controlCall runs a register, unregister, health, remove or size call
// (one without per-key answers): the client's call guard, the call-level
// faults placed before the call's effect, the hold, a scripted answer
// placed before the effect (which then never happens), effect (the
// call's own work and answer), then the faults and a scripted answer
// placed after it. A scripted answer replaces effect's.
func (c *Client) controlCall(op Op, effect func() error) error {
	if err := c.guard.Enter(); err != nil {
		return err
	}
	defer c.guard.Leave()
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

// wait holds the call at its gate, if scripted, then adds the latency
// and, for a stuck transfer, the transfer timeout.
func (c *call) wait() {
	if c.hold != nil {
		c.hold.Hold.pass(c.keys)
	}
	time.Sleep(c.latency + c.stuck) // returns at once for 0
}

func phaseWords(p Phase) string {
	if p == AfterLanding {
		return "after landing"
	}
	return "before landing"
}
