// Package fakesdk is an in-memory Mooncake store with the real store's
// behaviour and scripted faults: a [Store] is the pool, each
// [Store.Client] a [mooncakesdk.Client] on it. Driver tests run on it on
// any machine, without the library or a master. Where the behaviour
// below differs from the design notes, it follows what a real pool was
// seen to answer (../shared/mooncake/README.md, ARCHITECTURE §9).
//
// # What it promises (the real store's behaviour)
//
//   - A put never overwrites: it answers 0 when it stored the object, when
//     the key already holds a complete object, and when a put of the key
//     (from any client) is in flight and began less than the discard
//     timeout ago ([Options.DiscardTimeout], the master's
//     put_start_discard_timeout_sec, 30 s by default). The first
//     writer's bytes stay.
//   - A put in flight can be overtaken: once its claim is as old as the
//     discard timeout, the next put of the key discards it and stores
//     its own bytes; the overtaken put, when it ends, stores nothing.
//   - Is-exist answers 1 only for a complete object; 0 for a missing key
//     and for one a put is still writing.
//   - A get into a buffer at least the object's size writes the object at
//     the buffer's head, leaves the rest untouched and answers the size;
//     into a smaller buffer it answers INVALID_PARAMS (-600) and writes
//     nothing. A missing key answers OBJECT_NOT_FOUND (-704), a key a put
//     is still writing REPLICA_IS_NOT_READY (-703); neither writes.
//   - A key given twice in one put: the first copy gets its real answer
//     (and is stored from its own buffer), every later copy answers 0,
//     whatever happened to the first, even when nothing was stored. In a
//     get each copy is checked against its own buffer and size and
//     written into its own buffer; in an exists-check each copy answers.
//   - Objects can vanish ([Store.Vanish], or a [Fault] with Vanish), as
//     with eviction, a segment provider silent past the master's
//     client_ttl, or the destroy of the client that mounted the segment:
//     later gets answer -704.
//   - A stuck transfer ([Fault.Running]) answers TRANSFER_FAIL (-800)
//     after the transfer timeout ([Options.TransferTimeout]): 30 s over
//     TCP (MC_TCP_STATUS_TIMEOUT_SEC), 60 s over RDMA (the fixed cap),
//     the transfer still running.
//   - With [Options.Capacity], a put that does not fit answers
//     NO_AVAILABLE_HANDLE (-200); a put in flight holds its bytes.
//   - With [Options.RDMA], a buffer outside the client's registered
//     regions answers TRANSFER_FAIL (-800) and moves nothing; over TCP
//     registration is not checked.
//   - The string-keyed and the [mooncakesdk.KeyList] calls are one call.
//     Malformed arguments, empty batches and destroyed clients behave as
//     in the real binding ([mooncakesdk.CheckTransfer],
//     [mooncakesdk.CheckTransferList], [mooncakesdk.ErrClosed]); a client
//     guards its calls with the real binding's
//     [mooncakesdk.HandleGuard].
//
// # Scripted faults
//
// [Store.Script] adds [Fault]s, per key or per call, each striking a
// number of calls or every one: any per-key code (LEASE_EXPIRED after
// writing, TRANSFER_FAIL with the transfer over or still running, RPC
// failures before or after the object landed, …), a function-level -1
// before or after the data moved, a panic, a call held at a [Gate]
// until the test opens it, objects that vanish before or after a call's
// data moved. [Options.Latency] adds a fixed delay to every data call. A
// transfer still running after its call answered touches its buffer
// only when its gate opens; [Store.Running] counts them.
//
// Time is the time package's: the discard timeout, the transfer
// timeout and the latency are real waits, which tests run inside a
// testing/synctest bubble so they pass at once and measure exactly.
//
// # What it refuses
//
// A fault that says nothing or two things, or a Vanish on a call without
// keys ([ErrScript]); seeding an empty key or object ([ErrSeed]).
//
// # Decisions
//
//   - Objects are immutable and live until the store is dropped or they
//     vanish: no automatic eviction, no leases, no TTL, no remove.
//     Leases appear only as scripted LEASE_EXPIRED answers, vanishing
//     only as scripted (the test says when). A destroyed client's
//     objects stay: every client is taken to mount nothing, as the
//     driver's clients do (global segment 0), so its objects live on
//     other processes' segments; the destroy of a mounting client is
//     scripted as a Vanish.
//   - A put checks, per key (a repeated key's first copy only) and in
//     this order: 0 bytes (-600); already stored, or in flight for less
//     than the discard timeout (0); a stale claim is then discarded;
//     room (-200); RDMA registration (-800). A get, per index: in flight
//     (-703, however old the claim: only a put discards one); missing
//     (-704); too large for its buffer (-600); RDMA registration (-800).
//   - A discarded claim's bytes stay counted as used until its own put
//     ends (the master frees discarded space only later, after
//     put_start_release_timeout_sec). The overtaken put's answer is what
//     the master's put-end answers, which matches the key's holder by
//     client: ILLEGAL_CLIENT (-601) when another client (or a seed)
//     holds the key now, OBJECT_NOT_FOUND (-704) when nothing does, 0
//     when the same client does. (The real master would then mark that
//     newer put's reservation complete early; the fake does not model
//     that window.) A scripted code still answers instead.
//   - Every put, get and exist call reads the store's state when it
//     arrives (its answers are fixed then, and a put claims its keys, in
//     flight from then on, its claim's age counted from then), then
//     waits at its Hold gate, for the latency and, when a transfer is
//     stuck, for the transfer timeout, then moves its data. A running
//     transfer of a put reads the buffer once its gate opens and stores
//     nothing (the store revoked the key); one of a get writes the
//     object. A Running fault on a key the store would not have served
//     moves nothing and adds no wait.
//   - A Vanish fault with BeforeLanding drops the objects as the call
//     arrives (it finds them gone); with AfterLanding once its data
//     moved (it is answered as if they were there). Puts in flight are
//     never dropped.
//   - A per-key fault on a put strikes a repeated key's first copy
//     only (later copies answer 0 whatever happened); on a get or
//     exist, every copy.
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
//   - A zero or negative timeout option: 0 is the real store's default;
//     a negative DiscardTimeout makes every claim stale at once, a
//     negative TransferTimeout answers a stuck transfer at once.
package fakesdk
