package mooncakesdk

// Client is one set-up Mooncake store client: what a store driver needs
// of the store and nothing more. [Open] returns the real one (the C ABI
// loaded with purego); package fakesdk an in-memory one with the same
// behaviour. A Client exists only once its setup succeeded, so no call
// below can reach a handle whose setup failed.
//
// Buffers are addresses of memory outside the Go heap (mmap, pinned host
// memory, C allocations); the caller keeps that memory mapped for as long
// as the store may touch it, which after a [TransferFail] answer is for
// good.
//
// Every method may be called from any goroutine, concurrently with the
// others, except Destroy: Destroy waits for calls in progress, and every
// call after it returns [ErrClosed] without reaching the store.
//
// Each batch call comes in two forms with one meaning: keys as a
// [KeyList] (BatchPutFromList, BatchGetIntoList, BatchIsExistList), whose
// packed buffer is what crosses to the library, and keys as strings
// (BatchPutFrom, BatchGetInto, BatchIsExist), which pack the strings into
// a KeyList and make the same call.
//
// A method's error is about the whole call: [ErrInvalidArgument] (nothing
// was called), [ErrClosed], or a [*CallError] ([ErrCallFailed]). Per-key
// answers are never errors; they are written to results.
//
// Calls block until every transfer is final, except after a transfer
// timeout: over TCP the status-frame timeout (MC_TCP_STATUS_TIMEOUT_SEC,
// 30 s by default), otherwise the store's fixed 60 s cap. The key then
// answers [TransferFail] while the network may still read or write its
// buffer. A key given twice in one call proves nothing (see
// BatchPutFrom and BatchGetInto): callers never pass a key twice.
type Client interface {
	// RegisterBuffer registers n bytes at addr with the transfer engine,
	// so the store may read and write them (and, over TCP, so may peers).
	// Over RDMA a transfer from or into memory that is not registered
	// fails; over TCP it is not checked. A failure is a [*CallError]:
	// -1 for addr 0 or n 0, -600 when the engine refuses (for example an
	// overlap with a registered buffer).
	RegisterBuffer(addr uintptr, n uint64) error

	// UnregisterBuffer withdraws the registration starting at addr. The
	// store does not check that no transfer still touches the memory: the
	// caller calls it only after every access into the buffer ended.
	UnregisterBuffer(addr uintptr) error

	// BatchPutFrom stores, for each i, sizes[i] bytes at bufs[i] under
	// keys[i], and writes one answer per key into results: 0 when the key
	// holds an object afterwards, or another writer's put of it began
	// less than the master's put_start_discard_timeout_sec (30 s by
	// default) ago and is still in flight (a put never overwrites, and a
	// 0 proves neither that these bytes were stored nor that the object
	// is readable yet; a put in flight for longer is discarded and this
	// put stores its own bytes), or a negative [Code]. All four slices
	// have the same length. Waits as the Client doc says. A key given
	// twice: its first entry gets its real answer and every later entry
	// answers 0, whatever happened to the first (even when nothing was
	// stored). An error means no result was written (see [ErrCallFailed]
	// for what that proves).
	BatchPutFrom(keys []string, bufs []uintptr, sizes []uint64, results []int64) error

	// BatchPutFromList is BatchPutFrom with its keys packed in a
	// [KeyList]: the list's buffer crosses to the library as it is.
	BatchPutFromList(keys *KeyList, bufs []uintptr, sizes []uint64, results []int64) error

	// BatchGetInto reads, for each i, the object under keys[i] into the
	// sizes[i] bytes at bufs[i], and writes one answer per key into
	// results: the object's byte count (its bytes are at the head of the
	// buffer, the rest of the buffer untouched), [InvalidParams] when the
	// object is larger than the buffer (nothing written),
	// [ObjectNotFound] (no object, or it vanished: evicted, or its
	// segment's client was destroyed or went silent past the master's
	// client_ttl), [ReplicaIsNotReady] while a put is in flight,
	// [LeaseExpired] after the buffer was written, [TransferFail] while
	// the transfer may still write the buffer, or another negative
	// [Code]. Same slices and waits as BatchPutFrom. A key given twice:
	// each entry is checked against its own buffer and size and, when
	// served, written into its own buffer.
	BatchGetInto(keys []string, bufs []uintptr, sizes []uint64, results []int64) error

	// BatchGetIntoList is BatchGetInto with its keys packed in a
	// [KeyList].
	BatchGetIntoList(keys *KeyList, bufs []uintptr, sizes []uint64, results []int64) error

	// BatchIsExist writes for each key 1 when a complete object stands
	// behind it, 0 when none does or a put of it is still in flight, or a
	// negative [Code]. It grants a read lease on each object found.
	BatchIsExist(keys []string, results []int32) error

	// BatchIsExistList is BatchIsExist with its keys packed in a
	// [KeyList].
	BatchIsExistList(keys *KeyList, results []int32) error

	// HealthCheck returns nil when the client is set up and the master
	// answers its pings; an error wrapping [ErrUnhealthy] when the
	// library answers "not initialised or closed" (1) or "master
	// unreachable" (2); a [*CallError] for any other answer (-1: a NULL
	// handle or an escaped exception).
	HealthCheck() error

	// Destroy tears the client down (unmounts its segment, so the objects
	// stored there vanish, and frees the handle). It waits for calls in
	// progress; later calls, including Destroy, return [ErrClosed] and
	// reach nothing. Whoever opened the client calls it last: the
	// library's own exit cleanup does not run when a Go program exits
	// (except in a binary built with -race, whose exit calls C exit():
	// the library's static destructors then run over any client still
	// alive, and can crash; a test that keeps a client on purpose exits
	// with syscall.Exit).
	Destroy() error
}

// Sizer is an optional interface of a [Client], found by type assertion:
// it asks the master for one object's size, which tells an object being
// written from one that is absent — which BatchIsExist cannot (it
// answers 0 for both).
type Sizer interface {
	// GetSize answers the size in bytes of the complete object under key;
	// [ReplicaIsNotReady] (a *CallError) while a put of it is in flight
	// (the master holds its metadata, no replica is readable yet);
	// [ObjectNotFound] when no object has the key; another *CallError
	// for any other answer. One RPC to the master a key (there is no
	// batch form in the C ABI); like an exists-check, a hit grants the
	// object a read lease.
	GetSize(key string) (int64, error)
}

// Remover is an optional interface of a [Client], found by type
// assertion: it removes one object. No store driver needs it (a driver
// never removes what a lender published); tools do, to clean up after
// themselves (kvshare doctor's probe object).
type Remover interface {
	// Remove removes the object under key. Without force, an object under
	// a live read lease (an exists-check or a get grants one for the
	// master's default_kv_lease_ttl, 10 s) is refused with
	// OBJECT_HAS_LEASE (-706); with force it is removed all the same. A
	// missing key answers OBJECT_NOT_FOUND (-704). A failure is a
	// [*CallError]; a malformed key [ErrInvalidArgument]; after Destroy,
	// [ErrClosed].
	Remove(key string, force bool) error
}
