// Package nodeclient is the Go client of the kvshare node: an engine in
// its own process attaches over a Unix socket, lends memory as a sealed
// memfd, and publishes, fetches and looks up rows through the node. No
// byte of a row crosses the socket, and the package imports no store
// driver.
//
// [Dial] says hello and returns a [Client] with the node's limits
// ([Client.Welcome]). [Client.Lend] creates a memfd of a [Geometry]
// (regions of slots, each region starting on a 4096-byte boundary),
// seals it against shrinking, growing and further seals, maps it shared
// and lends it: [Lend.Slot] is a slot's bytes, shared with the node.
// [Lend.Publish] and [Lend.Fetch] submit a contract.View and return an
// [Attempt], a contract.Attempt: its outcome says which rows arrived,
// and its quiescence (Done) says the slots may be reused.
// [Client.Lookup] asks which names the store holds, lending nothing.
// [Lend.Return] gives the memory back, [Client.Close] says goodbye.
//
// Every call that waits for the node takes a context. Views the node
// would refuse are refused before anything is sent, with errors wrapping
// contract.ErrInvalidSubmission and the nodewire sentinel of the code
// the node would answer; the node's refusals are *nodewire.RefusedError.
//
// Memory is released only on the node's word. An attempt whose
// connection ends before it quiesces never quiesces (its outcome, if it
// had not come, is forced with every row Pending), and a lend is unmapped
// only once the node answered Returned: a return answered Held, or a
// lend cut off from the node, stays mapped and counted ([Client.Lent]).
//
// A closed connection proves nothing; the node process's exit does. The
// client takes a pidfd of the node at Dial ([Client.Watch]); every call
// and attempt the end of the connection cuts off fails with a
// [*NodeLostError] whose Evidence is [NodeExited] or [EvidenceUnknown].
// [Client.WaitNodeExit] waits for the proof: then attempts cut off
// quiesce, and [Lend.Return] frees a lend cut off. Without a pidfd
// ([ErrNoEvidence]) that memory is kept for good.
package nodeclient
