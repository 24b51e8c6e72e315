// Package redisdrv is kvshare's driver for Redis: a [contract.Driver]
// and [contract.Looker] over one Redis server (7.0 or later) or a Redis
// Cluster, through the rueidis client. [Open] reads a store file
// ([blob] and [redis]) and connects; [New] takes a client, which the
// driver then owns; [NewCluster] takes a cluster's client settings and
// seed addresses. Subpackage redistest starts loopback servers and
// clusters, and proxies in front of them, for tests.
//
// It runs on the driver kit (package drivekit), which keeps the
// contract's machinery; this package keeps what is Redis's. It declares Put, Get, Cancel, AbsentIsMiss and LookupInFlight; host
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
// final answer gives. How the slot map is kept: docs/design/redisdrv.md
// ("A Redis Cluster").
//
// Access ends when the part's round trips returned (on its worker, and
// on a cluster on the goroutines the worker waits for): for a put, the
// client wrote and flushed the whole pipeline before DoMultiStream
// returned and reads the spans nowhere else; for a get, the spans are
// written only inside WriteTo, which that goroutine called for every
// reply. A timeout or a lost connection ends the access too. A
// cluster's rows settle node by node. A pipeline whose pooled connection
// closed before its first reply goes again, at most once a connection
// the workers can hold. A panic inside the client makes every row of the
// part Fault and the access Unprovable, for good.
//
// Recycle ([contract.Recycler]) is the kit's without a teardown (every
// store call's access ends when it returns): it succeeds while no access
// is Unprovable and is refused, keeping the memory, while one is.
// Lookups (EXISTS, the driver's own puts InFlight) run on a goroutine of
// the kit's, at most [MaxLookupsInStore] inside the client at once.
//
// Refusals (after Drain or Close, a repeated name, a row of more than
// one span, a span outside the live registrations, a hint, a Device
// region) are the kit's: [contract.ErrDriverRejected], nothing recorded.
// The client is github.com/redis/rueidis (its DoMultiStream hands each
// reply to a writer on the caller's goroutine); why, and the evidence in
// its source: docs/design/redisdrv.md; the Redis tier: README.md.
package redisdrv
