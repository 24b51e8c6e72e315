// Package node is the kvshare node: a daemon that engines in other
// processes attach to over a Unix socket, lend staging memory to (a
// sealed memfd each), and move rows through, over one store driver that
// every engine shares. The protocol is module nodewire's; the Go client
// is module nodeclient; `kvshare node` (module tools) runs it.
//
// [New] builds a [Node] from a [Config]: the shared driver, the key
// prefix, the socket, who may attach and the limits. [Node.Serve] (or
// [Node.ListenAndServe], which creates the socket with its mode through
// [Listen]) serves each connection as a session: the peer's uid checked
// against the allow-list before anything is read, then hello and
// welcome, then lends, publishes, fetches, lookups, cancels, returns and
// stats, pipelined and answered by request id.
//
// Each lend is checked (a memfd sealed against shrinking and not against
// writing, at least as long as its geometry), mapped shared for its
// geometry, and bound through a view of its own over the shared driver
// (package node/driverview) by binding.Open, under a hold whose Release
// alone unmaps it. A publish or fetch becomes an attempt of the lend's
// backend, with the engine's deadline: accepted, then its outcome, then
// quiesced once every access to its slots ended.
//
// # What it promises
//
//   - Memory an engine lent is unmapped only once binding confirmed every
//     region unregistered, after every access ended. When an engine
//     leaves, or returns a lend, while a transfer is in the store's
//     hands, the node keeps the lend mapped and counted, and unmaps it
//     the moment access ends; a call the store gave up on waits for
//     [Node.Reclaim]: one recycle of the store client for every engine
//     (their new work refused Busy meanwhile), run on its own only past
//     Config.ReclaimAbove.
//   - No engine's input stops the node: a frame it cannot read ends that
//     session with a goodbye naming the code and the field; a request it
//     will not serve is refused with the code and the field; both are
//     counted.
//   - One engine cannot starve the others of the node: its attempts and
//     lookups in flight, rows, frame size, lent bytes and queue of
//     unread replies are bounded, and one that stops reading is
//     disconnected.
//   - Engines share blocks only under the same scope: the hello's scope
//     (keys.Scope's canonical text) makes every key of the session, and
//     its tenant is admitted only when Config.Tenants gives it to the
//     peer's uid or gid. Each tenant's lent bytes, bytes and attempts in
//     flight are bounded over all its sessions, memory held for an
//     engine that left included; a request over a limit is refused
//     before it touches anything.
//
// [Node.Shutdown] ends every session (goodbye ShuttingDown), waits for
// their memory to be given back and returns what is still held; the
// caller closes the driver only once it returned nothing. [Node.Stats]
// counts per node and per engine.
//
// The limits, refusals and lifecycle: the module's README.md. Why:
// docs/design/node.md.
package node
