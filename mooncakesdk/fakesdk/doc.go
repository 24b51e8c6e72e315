// Package fakesdk is an in-memory Mooncake store with the real store's
// behaviour and scripted faults: a [Store] is the pool, each
// [Store.Client] a [mooncakesdk.Client] on it. Driver tests run on it on
// any machine, without the library or a master. Where the real store's
// source and a real pool disagree, it follows what the pool was seen to
// answer.
//
// It promises the real store's behaviour:
//
//   - A put never overwrites: it answers 0 when it stored the object, when
//     the key already holds a complete object, and when a put of the key
//     is in flight and began less than [Options.DiscardTimeout] ago; the
//     first writer's bytes stay. After that the next put discards the
//     stale claim and stores its own bytes.
//   - Is-exist answers 1 only for a complete object. GetSize
//     ([mooncakesdk.Sizer]) answers a complete object's size,
//     REPLICA_IS_NOT_READY (-703) while a put of the key is in flight,
//     OBJECT_NOT_FOUND (-704) for none: it tells the two apart where
//     is-exist answers 0 for both.
//   - A get into a buffer at least the object's size writes it at the
//     buffer's head and answers the size; into a smaller one it answers
//     INVALID_PARAMS (-600) and writes nothing. A missing key answers
//     OBJECT_NOT_FOUND (-704), a key a put is still writing
//     REPLICA_IS_NOT_READY (-703); neither writes.
//   - A key given twice in one put: every copy after the first answers 0,
//     whatever happened to the first. In a get each copy is checked
//     against its own buffer.
//   - Objects can vanish ([Store.Vanish], or a [Fault] with Vanish); later
//     gets answer -704.
//   - A stuck transfer ([Fault.Running]) answers TRANSFER_FAIL (-800)
//     after [Options.TransferTimeout], the transfer still running, until
//     its gate opens or its client's Destroy ends it untouched.
//   - With [Options.Capacity] a put that does not fit answers
//     NO_AVAILABLE_HANDLE (-200); with [Options.RDMA] a buffer outside the
//     client's registered regions answers -800 and moves nothing.
//   - Malformed arguments, empty batches and destroyed clients behave as
//     in the real binding ([mooncakesdk.CheckTransfer],
//     [mooncakesdk.ErrClosed]); a client guards its calls with
//     [mooncakesdk.HandleGuard].
//
// [Store.Script] adds [Fault]s, per key or per call, each striking a
// number of calls or every one: any per-key code, a function-level -1, a
// panic, each before or after the data moved; a call held at a [Gate]
// until the test opens it; objects that vanish. [Store.HoldKeys] holds
// the calls carrying chosen keys before the store looks at them, and
// [Gate.Holding] says which keys a held call carries. [Options.Latency]
// adds a fixed delay to every data call. The timeouts and the latency are
// real waits, which tests run inside a testing/synctest bubble.
//
// It refuses a fault that says nothing or two things, or a Vanish on a
// call without keys ([ErrScript]), and seeding an empty key or object
// ([ErrSeed]).
//
// Options and faults in tables: the module's README.md. What the fake
// models, where it simplifies, and the real store's evidence:
// docs/design/mooncakesdk.md (section "The fake store (fakesdk)").
package fakesdk
