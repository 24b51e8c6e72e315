// Package slotmap reads a Redis Cluster's slot map as a cluster client
// reads it (CLUSTER SLOTS): which node serves each of the 16384 hash
// slots, and which slots none serves. The driver routes each key's
// commands with it; kvshare doctor checks a cluster's coverage with it,
// and the benchmark's floor routes as the driver does.
//
// [Read] asks one node; [Of] builds a [Map] from ranges ([Range]) for
// tests and callers that have them. A Map never changes. [Map.Node] is
// the node serving a key (its slot the one CLUSTER KEYSLOT answers);
// [Map.Gaps] the ranges no node serves. [NodeOption] is a node's client
// option, made as the driver makes it.
package slotmap
