package fakesdk

import (
	"bytes"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// BatchPutFrom stores each key's bytes unless the key already holds an
// object or a put of it is in flight (answer 0 either way: a put never
// overwrites). A buffer of 0 bytes answers INVALID_PARAMS; a pool without
// room NO_AVAILABLE_HANDLE; with RDMA, an unregistered buffer
// TRANSFER_FAIL. Scripted faults replace answers as [Fault] says.
func (c *Client) BatchPutFrom(keys []string, bufs []uintptr, sizes []uint64, results []int64) error {
	s := c.store
	arrive := func(e *entry) {
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
	land := func(e *entry) {
		if !e.claimed {
			return
		}
		buf, size := bufs[e.last], sizes[e.last]
		switch f := e.fault; {
		case f != nil && f.Running != nil:
			s.straggle(f.Running, func() { _ = bytes.Clone(memoryAt(buf, size)) })
			s.settle(e.key, nil, size)
		case f != nil && f.Phase == BeforeLanding:
			s.settle(e.key, nil, size)
		default:
			s.settle(e.key, bytes.Clone(memoryAt(buf, size)), size)
		}
	}
	return c.dataCall(Put, keys, mooncakesdk.CheckTransfer(keys, bufs, sizes, results), arrive, land,
		func(i int, code mooncakesdk.Code) { results[i] = int64(code) })
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
	s := c.store
	arrive := func(e *entry) {
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
	land := func(e *entry) {
		if e.obj == nil {
			return
		}
		dst, obj := memoryAt(bufs[e.last], uint64(len(e.obj))), e.obj
		switch f := e.fault; {
		case f != nil && f.Running != nil:
			s.straggle(f.Running, func() { copy(dst, obj) })
		case f != nil && f.Phase == BeforeLanding:
		default:
			copy(dst, obj)
		}
	}
	return c.dataCall(Get, keys, mooncakesdk.CheckTransfer(keys, bufs, sizes, results), arrive, land,
		func(i int, code mooncakesdk.Code) { results[i] = int64(code) })
}

// BatchIsExist answers 1 for a key with a complete object, 0 for a
// missing key or one a put is still writing.
func (c *Client) BatchIsExist(keys []string, results []int32) error {
	s := c.store
	arrive := func(e *entry) {
		if _, ok := s.objects[e.key]; ok {
			e.code = 1
		}
	}
	return c.dataCall(Exist, keys, mooncakesdk.CheckExist(keys, results), arrive, func(*entry) {},
		func(i int, code mooncakesdk.Code) { results[i] = int32(code) })
}
