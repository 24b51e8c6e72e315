package fakesdk

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// Client is one client of a [Store], implementing [mooncakesdk.Client]
// with the real store's answers (see the package doc). Its methods may be
// called concurrently; Destroy waits for calls in progress.
type Client struct {
	store *Store

	mu        sync.RWMutex // held shared by calls, exclusively by Destroy
	destroyed bool

	regMu   sync.Mutex
	regions map[uintptr]uint64 // registered buffers: start → length
}

var _ mooncakesdk.Client = (*Client)(nil)

func (c *Client) enter() bool {
	c.mu.RLock()
	if c.destroyed {
		c.mu.RUnlock()
		return false
	}
	return true
}

// RegisterBuffer records the region. It answers -1 for addr 0 or n 0 and
// INVALID_PARAMS (-600) for a region overlapping one already registered.
func (c *Client) RegisterBuffer(addr uintptr, n uint64) error {
	if !c.enter() {
		return mooncakesdk.ErrClosed
	}
	defer c.mu.RUnlock()
	cl := c.store.begin(Register, nil)
	if err := cl.control(); err != nil {
		return err
	}
	if addr == 0 || n == 0 {
		return &mooncakesdk.CallError{Func: Register.cFunc(), Code: mooncakesdk.InternalError}
	}
	c.regMu.Lock()
	defer c.regMu.Unlock()
	for start, size := range c.regions {
		if addr < start+uintptr(size) && start < addr+uintptr(n) {
			return &mooncakesdk.CallError{Func: Register.cFunc(), Code: mooncakesdk.InvalidParams}
		}
	}
	c.regions[addr] = n
	return nil
}

// UnregisterBuffer forgets the region starting at addr; INVALID_PARAMS
// (-600) when none starts there. Like the real store, it does not check
// whether a transfer still touches the memory.
func (c *Client) UnregisterBuffer(addr uintptr) error {
	if !c.enter() {
		return mooncakesdk.ErrClosed
	}
	defer c.mu.RUnlock()
	cl := c.store.begin(Unregister, nil)
	if err := cl.control(); err != nil {
		return err
	}
	c.regMu.Lock()
	defer c.regMu.Unlock()
	if _, ok := c.regions[addr]; !ok {
		return &mooncakesdk.CallError{Func: Unregister.cFunc(), Code: mooncakesdk.InvalidParams}
	}
	delete(c.regions, addr)
	return nil
}

// registered reports whether [addr, addr+n) lies inside one region.
func (c *Client) registered(addr uintptr, n uint64) bool {
	c.regMu.Lock()
	defer c.regMu.Unlock()
	for start, size := range c.regions {
		if addr >= start && uint64(addr-start)+n <= size {
			return true
		}
	}
	return false
}

// BatchPutFrom stores each key's bytes unless the key already holds an
// object or a put of it is in flight (answer 0 either way: a put never
// overwrites). A buffer of 0 bytes answers INVALID_PARAMS; a pool without
// room NO_AVAILABLE_HANDLE; with RDMA, an unregistered buffer
// TRANSFER_FAIL. Scripted faults replace answers as [Fault] says.
func (c *Client) BatchPutFrom(keys []string, bufs []uintptr, sizes []uint64, results []int64) error {
	if err := mooncakesdk.CheckTransfer(keys, bufs, sizes, results); err != nil {
		return err
	}
	if !c.enter() {
		return mooncakesdk.ErrClosed
	}
	defer c.mu.RUnlock()
	if len(keys) == 0 {
		return nil
	}
	s := c.store
	cl := s.begin(Put, keys)
	if err := cl.strike(BeforeLanding); err != nil {
		return err
	}

	s.mu.Lock()
	for _, e := range cl.entries {
		size := sizes[e.last]
		_, stored := s.objects[e.key]
		switch {
		case size == 0:
			e.code = mooncakesdk.InvalidParams
		case stored || s.writing[e.key]:
			e.code = mooncakesdk.OK
		case s.opts.Capacity > 0 && s.used+int64(size) > s.opts.Capacity:
			e.code = mooncakesdk.NoAvailableHandle
		case s.opts.RDMA && !c.registered(bufs[e.last], size):
			e.code = mooncakesdk.TransferFail
		default:
			e.claimed = true
			s.writing[e.key] = true
			s.used += int64(size)
		}
	}
	s.mu.Unlock()

	cl.wait()

	for _, e := range cl.entries {
		if !e.claimed {
			continue
		}
		buf, size := bufs[e.last], sizes[e.last]
		f := e.fault
		switch {
		case f != nil && f.Running != nil:
			s.straggle(f.Running, func() { _ = bytes.Clone(memoryAt(buf, size)) })
			s.settle(e.key, nil, size)
		case f != nil && f.Phase == BeforeLanding:
			s.settle(e.key, nil, size)
		default:
			s.settle(e.key, bytes.Clone(memoryAt(buf, size)), size)
		}
	}

	if err := cl.strike(AfterLanding); err != nil {
		return err
	}
	for _, e := range cl.entries {
		for _, i := range e.index {
			results[i] = int64(e.answer())
		}
	}
	return nil
}

// settle ends a claimed put: the object is stored, or (obj nil) the claim
// and its bytes are given back.
func (s *Store) settle(key string, obj []byte, claimed uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.writing, key)
	if obj == nil {
		s.used -= int64(claimed)
		return
	}
	s.objects[key] = obj
}

// BatchGetInto writes each object to the head of its buffer and answers
// its size. A buffer smaller than the object answers INVALID_PARAMS and
// is not written; a missing key OBJECT_NOT_FOUND; a key a put is still
// writing REPLICA_IS_NOT_READY; with RDMA, an unregistered buffer
// TRANSFER_FAIL. Scripted faults replace answers as [Fault] says.
func (c *Client) BatchGetInto(keys []string, bufs []uintptr, sizes []uint64, results []int64) error {
	if err := mooncakesdk.CheckTransfer(keys, bufs, sizes, results); err != nil {
		return err
	}
	if !c.enter() {
		return mooncakesdk.ErrClosed
	}
	defer c.mu.RUnlock()
	if len(keys) == 0 {
		return nil
	}
	s := c.store
	cl := s.begin(Get, keys)
	if err := cl.strike(BeforeLanding); err != nil {
		return err
	}

	s.mu.Lock()
	for _, e := range cl.entries {
		size := sizes[e.last]
		obj, stored := s.objects[e.key]
		switch {
		case s.writing[e.key]:
			e.code = mooncakesdk.ReplicaIsNotReady
		case !stored:
			e.code = mooncakesdk.ObjectNotFound
		case uint64(len(obj)) > size:
			e.code = mooncakesdk.InvalidParams
		case s.opts.RDMA && !c.registered(bufs[e.last], size):
			e.code = mooncakesdk.TransferFail
		default:
			e.obj = obj // objects never change once stored
			e.code = mooncakesdk.Code(len(obj))
		}
	}
	s.mu.Unlock()

	cl.wait()

	for _, e := range cl.entries {
		if e.obj == nil {
			continue
		}
		dst := memoryAt(bufs[e.last], uint64(len(e.obj)))
		obj := e.obj
		f := e.fault
		switch {
		case f != nil && f.Running != nil:
			s.straggle(f.Running, func() { copy(dst, obj) })
		case f != nil && f.Phase == BeforeLanding:
		default:
			copy(dst, obj)
		}
	}

	if err := cl.strike(AfterLanding); err != nil {
		return err
	}
	for _, e := range cl.entries {
		for _, i := range e.index {
			results[i] = int64(e.answer())
		}
	}
	return nil
}

// BatchIsExist answers 1 for a key with a complete object, 0 for a
// missing key or one a put is still writing.
func (c *Client) BatchIsExist(keys []string, results []int32) error {
	if err := mooncakesdk.CheckExist(keys, results); err != nil {
		return err
	}
	if !c.enter() {
		return mooncakesdk.ErrClosed
	}
	defer c.mu.RUnlock()
	if len(keys) == 0 {
		return nil
	}
	s := c.store
	cl := s.begin(Exist, keys)
	if err := cl.strike(BeforeLanding); err != nil {
		return err
	}
	cl.wait()
	s.mu.Lock()
	for _, e := range cl.entries {
		if _, ok := s.objects[e.key]; ok {
			e.code = 1
		}
	}
	s.mu.Unlock()
	if err := cl.strike(AfterLanding); err != nil {
		return err
	}
	for _, e := range cl.entries {
		for _, i := range e.index {
			results[i] = int32(e.answer())
		}
	}
	return nil
}

// HealthCheck answers healthy unless a fault says otherwise.
func (c *Client) HealthCheck() error {
	if !c.enter() {
		return mooncakesdk.ErrClosed
	}
	defer c.mu.RUnlock()
	cl := c.store.begin(Health, nil)
	return cl.control()
}

// Destroy ends the client; its objects stay in the store, as objects on
// other processes' segments do. Later calls answer ErrClosed.
func (c *Client) Destroy() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.destroyed {
		return mooncakesdk.ErrClosed
	}
	c.destroyed = true
	c.store.mu.Lock()
	c.store.calls.Destroy++
	c.store.mu.Unlock()
	return nil
}

// control applies a register, unregister or health call's faults: a
// panic, a failure (-1), a hold, or a scripted answer.
func (cl *call) control() error {
	if err := cl.strike(BeforeLanding); err != nil {
		return err
	}
	cl.wait()
	if err := cl.strike(AfterLanding); err != nil {
		return err
	}
	if cl.code == nil {
		return nil
	}
	code := cl.code.Code
	if cl.op == Health && code > 0 {
		return fmt.Errorf("%w: health check answered %d", mooncakesdk.ErrUnhealthy, code)
	}
	return &mooncakesdk.CallError{Func: cl.op.cFunc(), Code: code}
}
