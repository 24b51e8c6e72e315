package fakesdk

import (
	"bytes"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// BatchPutFrom packs keys and makes the BatchPutFromList call.
func (c *Client) BatchPutFrom(keys []string, bufs []uintptr, sizes []uint64, results []int64) error {
	if err := mooncakesdk.CheckTransfer(keys, bufs, sizes, results); err != nil {
		return err
	}
	var l mooncakesdk.KeyList
	if err := mooncakesdk.PackKeys(&l, keys); err != nil {
		return err
	}
	return c.BatchPutFromList(&l, bufs, sizes, results)
}

// BatchPutFromList stores each key's bytes unless the key already holds
// an object or a put of it began less than the discard timeout ago and
// is still in flight (answer 0 either way: a put never overwrites); a
// put in flight for longer is discarded and this one stores its own
// bytes. A buffer of 0 bytes answers INVALID_PARAMS; a pool without room
// NO_AVAILABLE_HANDLE; with RDMA, an unregistered buffer TRANSFER_FAIL. A
// key given twice: the first copy is served, every later copy answers 0.
// Scripted faults replace answers as [Fault] says.
func (c *Client) BatchPutFromList(keys *mooncakesdk.KeyList, bufs []uintptr, sizes []uint64, results []int64) error {
	s := c.store
	arrive := func(e *entry) {
		size := sizes[e.index]
		switch {
		case size == 0:
			e.code = mooncakesdk.InvalidParams
		case s.objects[e.key] != nil || s.inFlight(e.key):
			e.code = mooncakesdk.OK
		default:
			s.discardStale(e.key)
			switch {
			case s.opts.Capacity > 0 && s.used+int64(size) > s.opts.Capacity:
				e.code = mooncakesdk.NoAvailableHandle
			case s.opts.RDMA && !c.registered(bufs[e.index], size):
				e.code = mooncakesdk.TransferFail
			default:
				e.claim = s.claimKey(e.key, c, size)
			}
		}
	}
	land := func(e *entry) {
		if e.claim == nil {
			return
		}
		buf, size := bufs[e.index], sizes[e.index]
		switch f := e.fault; {
		case f != nil && f.Running != nil:
			s.straggle(c, f.Running, func() { _ = bytes.Clone(memoryAt(buf, size)) })
			s.settle(e.claim, nil)
		case f != nil && f.Phase == BeforeLanding:
			s.settle(e.claim, nil)
		default:
			if code, overtaken := s.settle(e.claim, bytes.Clone(memoryAt(buf, size))); overtaken {
				e.code = code // a fault's code still answers
			}
		}
	}
	return c.dataCall(Put, keys, mooncakesdk.CheckTransferList(keys, bufs, sizes, results), arrive, land,
		func(i int, code mooncakesdk.Code) { results[i] = int64(code) })
}

// BatchGetInto packs keys and makes the BatchGetIntoList call.
func (c *Client) BatchGetInto(keys []string, bufs []uintptr, sizes []uint64, results []int64) error {
	if err := mooncakesdk.CheckTransfer(keys, bufs, sizes, results); err != nil {
		return err
	}
	var l mooncakesdk.KeyList
	if err := mooncakesdk.PackKeys(&l, keys); err != nil {
		return err
	}
	return c.BatchGetIntoList(&l, bufs, sizes, results)
}

// BatchGetIntoList writes each object to the head of its buffer and
// answers its size. A buffer smaller than the object answers
// INVALID_PARAMS and is not written; a missing (or vanished) key
// OBJECT_NOT_FOUND; a key a put is still writing REPLICA_IS_NOT_READY;
// with RDMA, an unregistered buffer TRANSFER_FAIL. Each index is checked
// against its own buffer and size, a key given twice included. Scripted
// faults replace answers as [Fault] says.
func (c *Client) BatchGetIntoList(keys *mooncakesdk.KeyList, bufs []uintptr, sizes []uint64, results []int64) error {
	s := c.store
	arrive := func(e *entry) {
		size := sizes[e.index]
		obj := s.objects[e.key]
		switch {
		case s.writing[e.key] != nil:
			e.code = mooncakesdk.ReplicaIsNotReady
		case obj == nil:
			e.code = mooncakesdk.ObjectNotFound
		case uint64(len(obj.data)) > size:
			e.code = mooncakesdk.InvalidParams
		case s.opts.RDMA && !c.registered(bufs[e.index], size):
			e.code = mooncakesdk.TransferFail
		default:
			e.obj = obj.data // objects never change once stored
			e.code = mooncakesdk.Code(len(obj.data))
		}
	}
	land := func(e *entry) {
		if e.obj == nil {
			return
		}
		dst, obj := memoryAt(bufs[e.index], uint64(len(e.obj))), e.obj
		switch f := e.fault; {
		case f != nil && f.Running != nil:
			s.straggle(c, f.Running, func() { copy(dst, obj) })
		case f != nil && f.Phase == BeforeLanding:
		default:
			copy(dst, obj)
		}
	}
	return c.dataCall(Get, keys, mooncakesdk.CheckTransferList(keys, bufs, sizes, results), arrive, land,
		func(i int, code mooncakesdk.Code) { results[i] = int64(code) })
}

// BatchIsExist packs keys and makes the BatchIsExistList call.
func (c *Client) BatchIsExist(keys []string, results []int32) error {
	if err := mooncakesdk.CheckExist(keys, results); err != nil {
		return err
	}
	var l mooncakesdk.KeyList
	if err := mooncakesdk.PackKeys(&l, keys); err != nil {
		return err
	}
	return c.BatchIsExistList(&l, results)
}

// BatchIsExistList answers 1 for a key with a complete object, 0 for a
// missing (or vanished) key or one a put is still writing.
func (c *Client) BatchIsExistList(keys *mooncakesdk.KeyList, results []int32) error {
	s := c.store
	arrive := func(e *entry) {
		if s.objects[e.key] != nil {
			e.code = 1
		}
	}
	return c.dataCall(Exist, keys, mooncakesdk.CheckExistList(keys, results), arrive, func(*entry) {},
		func(i int, code mooncakesdk.Code) { results[i] = int32(code) })
}
