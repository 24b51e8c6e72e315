// Package redisdrv is kvshare's driver for Redis: a [contract.Driver]
// and [contract.Looker] over one Redis server (7.0 or later) or a Redis
// Cluster, through the rueidis client. [Open] reads a store file
// ([blob] and [redis]) and connects; [New] takes a client, which the
// driver then owns; [NewCluster] takes a cluster's client settings and
// seed addresses. Subpackage redistest starts loopback servers and
// clusters, and proxies in front of them, for tests.
//
// The driver is the driver kit (package drivekit) over the store calls
// of this package: the kit keeps the contract's machinery (admission,
// parts, workers, Cancel, Drain, Close's guards, registrations, the
// lookup budget, Recycle and the counters), and this package what is
// Redis's: the pipelines, the cluster routing (the slot map, MOVED and
// ASK), the verdict table and the resend rule.
//
// It declares Put, Get, Cancel, AbsentIsMiss and LookupInFlight; host
// memory only; one span per row; no hints; no row cap of its own. Every
// admitted call is cut into parts of at most RowsPerCall rows and
// BytesPerCall bytes (a larger row goes alone), each run by a fixed pool
// of Workers goroutines (gets first) as one pipeline on a connection of
// its own, bounded by the call timeout.
//
// Verdicts:
//
//   - Put: SET key value NX, then STRLEN key, pipelined per row, the
//     value read from the row's span through the write buffer. OK is
//     Ready (a Redis value is whole the moment it exists); nil is Ready
//     when the standing value has the row's length, NotReady when it
//     vanished (0), else Fault; OOM is Declined; other errors Fault. A
//     key a put of this driver is writing now is NotReady unsent.
//   - Get: GET key, pipelined, streamed into the row's span, its length
//     known before its first byte: longer writes nothing, Fault;
//     shorter, Fault; nil, Miss; exactly the row's length, Ready.
//   - Lookup: EXISTS key, pipelined: 1 Present, 0 Absent; a key a put of
//     this driver is writing is InFlight, without a command.
//
// On a cluster, each node's rows of a part go as one pipeline on that
// node's own connection, the nodes at once; MOVED and ASK are followed
// (at most five times a row), and every row's verdict is the one its
// final answer gives. How the slot map is kept: docs/design.md ("A
// Redis Cluster").
//
// Access ends when the part's round trips returned (on its worker, and
// on a cluster on the goroutines the worker waits for): for a put, the
// client wrote and flushed the whole pipeline before DoMultiStream
// returned and reads the spans nowhere else; for a get, the spans are
// written only inside WriteTo, which that goroutine called for every
// reply. A timeout or a lost connection ends the access too. On a
// cluster, each node's rows are settled as soon as its pipeline
// returned, so a slow node holds up no other's verdicts. A pipeline
// whose pooled connection closed before its first reply goes again,
// within the part's time, at most once for each connection its workers
// can hold of the pool. A panic inside the client makes every row of the
// part Fault and the access Unprovable, for good: its region stays
// registered, Drain answers false and Close is refused.
//
// Recycle ([contract.Recycler]) is the kit's without a teardown: every
// store call's access ends when it returns, so there is nothing to tear
// down. It waits for the calls and lookups inside the client and
// succeeds while no access is Unprovable; while one is (only a panic
// inside the client makes one) it is refused and changes nothing: no
// teardown of a rueidis client proves what a client that panicked
// midway still does with lent memory, so that memory stays kept.
//
// Lookups: one pipeline of EXISTS key a name on each server that holds
// names (1 Present, 0 Absent, an error reply Unknown), and a key a put of
// this driver is writing InFlight (without a command when every key is
// one). The round trip runs on a goroutine of the kit's, bounded by the
// call timeout; a lookup whose context ends first answers Unknown and
// abandons it; at most [MaxLookupsInStore] are inside the client at
// once, and a lookup that finds that many answers Unknown at once.
//
// It refuses, with [contract.ErrDriverRejected] and recording nothing, a
// call while draining or closed, a batch whose names repeat, a row of
// more than one span, a span outside every live registration, a hint,
// and a Device region. Drain sends nothing to the server; Close, only
// after a Drain that returned true with every region unregistered and no
// lookup inside the client, closes the client (every node's, on a
// cluster).
//
// The client is github.com/redis/rueidis: its DoMultiStream writes a
// pipeline and hands each reply to a writer on the caller's goroutine,
// which the access-end evidence rests on. Why it was chosen, and the
// evidence in its source: docs/design.md ("Redis"); the Redis tier: the
// module's README.md.
package redisdrv
