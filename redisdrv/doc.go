// Package redisdrv is kvshare's driver for Redis: a [contract.Driver]
// and [contract.Looker] over one Redis server (7.0 or later) or a Redis
// Cluster, through the rueidis client. [Open] reads a store file
// ([blob] and [redis]) and connects; [New] takes a client, which the
// driver then owns; [NewCluster] takes the client settings and seeds of
// a cluster.
// Subpackage redistest starts a loopback redis-server, and a proxy in
// front of it, for tests.
//
// It declares Put, Get, Cancel, AbsentIsMiss and LookupInFlight; host
// memory only; one span per row; no hints; no row cap of its own. Every
// admitted call is cut into parts of at most RowsPerCall rows and
// BytesPerCall bytes (a larger row goes alone), each run by a fixed pool
// of Workers goroutines (package scheduler: gets first) as one pipeline
// on a connection of its own, bounded by the call timeout.
//
// Verdicts:
//
//   - Put: SET key value NX, then STRLEN key, pipelined per row, the
//     value read from the row's span (no copy of the whole object: it
//     passes through the connection's write buffer). OK is Ready: a Redis value
//     is whole the moment it exists. Nil (a value stands there already)
//     is Ready when its length is the row's, NotReady when it vanished
//     before STRLEN (0), Fault for another length. An out-of-memory
//     refusal is Declined; any other error, and a connection that failed
//     or timed out, Fault. A key a put of this driver is writing now is
//     NotReady without a command.
//   - Get: GET key, pipelined, the value streamed straight into the
//     row's span. Its length is known from the reply's header before its
//     first byte: a longer value writes nothing and is Fault; a shorter
//     one is Fault with its head written; nil is Miss; the row's length
//     exactly is Ready.
//   - Lookup: EXISTS key, pipelined: 1 Present, 0 Absent; a key a put of
//     this driver is writing is InFlight, without a command.
//
// On a cluster, a part's rows are grouped by the node that owns each
// key's hash slot in the slot map the driver read last (CLUSTER SLOTS),
// and each node's rows go as one pipeline on a connection of that
// node's own client, the nodes' pipelines at once; the part ends when
// every one returned. A row a node answers MOVED or ASK goes again to
// the node named (after ASKING for ASK), at most five times, and a
// MOVED reads the slot map again; a node that fails, or a slot no node
// serves, has it read again at most once a second. Every row's verdict
// is the one its final answer gives, as on one server; a row whose node
// cannot be reached is Fault. Lookups are grouped and redirected the
// same way.
//
// Access ends when the part's round trips returned (on its worker, and
// on a cluster on the goroutines the worker waits for): for a put, the
// client wrote and flushed the whole pipeline before DoMultiStream
// returned and reads the spans nowhere else; for a get, the spans are
// written only inside WriteTo, which that goroutine called for every
// reply. A timeout or a lost connection ends the access too.
// A pipeline whose connection was closed before its first reply (a
// pooled connection a restarted server dropped) is sent once more, on a
// fresh connection.
// A panic inside the client makes every row of the part Fault and the
// access Unprovable, for good: its region stays registered, Drain
// answers false and Close is refused.
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
// pipeline and hands each reply to a writer on the caller's goroutine, under the connection's deadline, which is what the
// access-end evidence above rests on. Why it was chosen, the evidence in
// its source and the tests that hold it: docs/design.md (section
// "Redis"). How to run the Redis tier: the module's README.md.
package redisdrv
