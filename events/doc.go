// Package events publishes what a kvshare node learns about the blocks
// of its store as KV events for KV-aware routers, in vLLM's format, so
// that a router that reads a vLLM engine's events reads the node's
// unchanged: BlockStored when a publish's rows end Ready, BlockRemoved
// when the node learns an announced block is gone, AllBlocksCleared
// where what a router believed is unknown.
//
// A [Publisher] implements node.Events (module node defines the hook
// and never imports this module). [Open] binds a ZeroMQ PUB socket and,
// optionally, a ROUTER socket that replays missed batches. Each message
// is three frames: the topic (the scope's digest in lowercase hex, or
// [UnscopedTopic]), the topic's sequence number (8 bytes, big-endian)
// and the batch, msgpack in vLLM's array layout ([VLLMLayout]).
//
// # What it promises
//
//   - A hook call never blocks the node: it hands a note to the
//     publisher's goroutine through a bounded queue, or drops it and
//     counts it (Stats.Dropped). A slow or absent subscriber costs the
//     node nothing: the PUB socket's queue is bounded too (Config.HWM).
//   - Each topic's sequence numbers start at 0 and have no gaps: a
//     subscriber to one scope detects every batch it missed, and the
//     replay socket answers it from the last Config.ReplayBatches
//     batches, then the end marker (sequence -1, an empty payload).
//   - A block is announced removed only if it was announced stored, and
//     at most Config.Announced blocks are remembered: past that the
//     oldest is forgotten (Stats.Forgotten), and its later absence is not
//     published.
//   - A topic's first batch after [Open] begins with AllBlocksCleared:
//     the node cannot enumerate its store, so what a router believed
//     about the scope before is unknown.
//
// [KeyspaceEvictions] turns a Redis server's keyspace notifications
// (evicted, expired, deleted keys) into BlockRemoved.
//
// The layout, the replay request and the decisions behind them: the
// module's README.md and docs/design/events.md.
package events
