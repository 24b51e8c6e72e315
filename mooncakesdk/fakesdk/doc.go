// Package fakesdk is an in-memory Mooncake store with the real store's
// behaviour and scripted faults: a [Store] is the pool, each
// [Store.Client] a [mooncakesdk.Client] on it. Driver tests run on it on
// any machine, without the library or a master.
//
// # What it promises (the real store's behaviour)
//
//   - A put never overwrites: it answers 0 when it stored the object, when
//     the key already holds a complete object, and when a put of the key
//     is still in flight (from any client). The first writer's bytes
//     stay.
//   - Is-exist answers 1 only for a complete object; 0 for a missing key
//     and for one a put is still writing.
//   - A get into a buffer at least the object's size writes the object at
//     the buffer's head, leaves the rest untouched and answers the size;
//     into a smaller buffer it answers INVALID_PARAMS (-600) and writes
//     nothing. A missing key answers OBJECT_NOT_FOUND (-704), a key a put
//     is still writing REPLICA_IS_NOT_READY (-703); neither writes.
//   - A key given twice in one call is served once, from the last
//     buffer and size given for it, and both entries get the same answer
//     (a get's first buffer is never written).
//   - With [Options.Capacity], a put that does not fit answers
//     NO_AVAILABLE_HANDLE (-200); a put in flight holds its bytes.
//   - With [Options.RDMA], a buffer outside the client's registered
//     regions answers TRANSFER_FAIL (-800) and moves nothing; over TCP
//     registration is not checked.
//   - Malformed arguments, empty batches and destroyed clients behave as
//     in the real binding ([mooncakesdk.CheckTransfer],
//     [mooncakesdk.ErrClosed]).
//
// # Scripted faults
//
// [Store.Script] adds [Fault]s, per key or per call, each striking a
// number of calls or every one: any per-key code (LEASE_EXPIRED after
// writing, TRANSFER_FAIL with the transfer over or still running, RPC
// failures before or after the object landed, …), a function-level -1
// before or after the data moved, a panic, a call held at a [Gate]
// until the test opens it. [Options.Latency] adds a fixed delay to every
// data call. A transfer still running after its call answered touches
// its buffer only when its gate opens; [Store.Running] counts them.
//
// # What it refuses
//
// A fault that says nothing or two things ([ErrScript]); seeding an
// empty key or object ([ErrSeed]).
//
// # Decisions
//
//   - Objects are immutable and live until the store is dropped: no
//     eviction, no leases, no TTL, no remove. Leases appear only as
//     scripted LEASE_EXPIRED answers. A destroyed client's objects stay
//     (the pool's memory is taken to belong to other processes).
//   - A put checks, per distinct key and in this order: 0 bytes (-600);
//     already stored or in flight (0); room (-200); RDMA registration
//     (-800). A get: in flight (-703); missing (-704); too large for the
//     buffer (-600); RDMA registration (-800).
//   - Every put, get and exist call reads the store's state when it
//     arrives (its answers are fixed then, and a put claims its keys, in
//     flight from then on), then waits at its Hold gate and for the
//     latency, then moves its data. A running transfer of a put reads
//     the buffer once its gate opens and stores nothing (the store
//     revoked the key); one of a get writes the object.
//   - A register or unregister call waits at its Hold gate before it
//     changes anything; a fault with BeforeLanding strikes before the
//     registration changes, one with AfterLanding after. A scripted
//     health answer of 1 or 2 wraps [mooncakesdk.ErrUnhealthy], any
//     other code is a [*mooncakesdk.CallError], as in the real binding.
//   - A per-key code on a key the store would not have served (missing,
//     already stored) replaces the answer and moves nothing.
//   - Register refuses address 0 or size 0 (-1) and a region overlapping
//     one registered (-600); unregister of an address where no region
//     starts answers -600. Neither checks for transfers still running.
//   - A fault's errors name the C function the real client would have
//     called, so a driver sees the same [*mooncakesdk.CallError].
//   - [Store.Calls] counts the calls that reached the store, for tests
//     that a driver made no call (a drain, a refused submission).
package fakesdk
