package mooncakesdk

import (
	"fmt"
	"strings"
)

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
// A method's error is about the whole call: [ErrInvalidArgument] (nothing
// was called), [ErrClosed], or a [*CallError] ([ErrCallFailed]). Per-key
// answers are never errors; they are written to results.
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
	// holds an object afterwards or someone else is writing it (a put
	// never overwrites, and a 0 proves neither that these bytes were
	// stored nor that the object is readable yet), or a negative [Code].
	// All four slices have the same length. The call returns when every
	// transfer is final, except that after the store's fixed 60 s wait it
	// answers [TransferFail] while the buffer may still be read. A key
	// that appears twice is stored from its last buffer and both entries
	// get the same answer: callers never pass a key twice. An error means
	// no result was written (see [ErrCallFailed] for what that proves).
	BatchPutFrom(keys []string, bufs []uintptr, sizes []uint64, results []int64) error

	// BatchGetInto reads, for each i, the object under keys[i] into the
	// sizes[i] bytes at bufs[i], and writes one answer per key into
	// results: the object's byte count (its bytes are at the head of the
	// buffer, the rest of the buffer untouched), [InvalidParams] when the
	// object is larger than the buffer (nothing written),
	// [ObjectNotFound], [ReplicaIsNotReady] while a put is in flight,
	// [LeaseExpired] after the buffer was written, [TransferFail] while
	// the transfer may still write the buffer, or another negative
	// [Code]. Same slices, waits and duplicate-key behaviour as
	// BatchPutFrom (both entries of a repeated key read into the last
	// buffer; the first buffer is never written).
	BatchGetInto(keys []string, bufs []uintptr, sizes []uint64, results []int64) error

	// BatchIsExist writes for each key 1 when a complete object stands
	// behind it, 0 when none does or a put of it is still in flight, or a
	// negative [Code]. It grants a read lease on each object found.
	BatchIsExist(keys []string, results []int32) error

	// HealthCheck returns nil when the client is set up and the master
	// answers its pings; an error wrapping [ErrUnhealthy] when the
	// library answers "not initialised or closed" (1) or "master
	// unreachable" (2); a [*CallError] for any other answer (-1: a NULL
	// handle or an escaped exception).
	HealthCheck() error

	// Destroy tears the client down (unmounts its segment, frees the
	// handle). It waits for calls in progress; later calls, including
	// Destroy, return [ErrClosed] and reach nothing. Whoever opened the
	// client calls it last: the library's own exit cleanup never runs in
	// a Go program.
	Destroy() error
}

// CheckTransfer checks the arguments of a BatchPutFrom or BatchGetInto
// call the way every [Client] does before touching the store: the four
// slices have one length, no key is empty or holds a NUL byte, and no
// buffer address is 0 for a non-empty size. The error wraps
// [ErrInvalidArgument] and names the first bad index.
func CheckTransfer(keys []string, bufs []uintptr, sizes []uint64, results []int64) error {
	n := len(keys)
	if len(bufs) != n || len(sizes) != n || len(results) != n {
		return fmt.Errorf("%w: %d keys, %d buffers, %d sizes, %d results", ErrInvalidArgument, n, len(bufs), len(sizes), len(results))
	}
	for i, k := range keys {
		if err := checkKey(i, k); err != nil {
			return err
		}
		if bufs[i] == 0 && sizes[i] > 0 {
			return fmt.Errorf("%w: key %d (%q): buffer address 0 for %d bytes", ErrInvalidArgument, i, k, sizes[i])
		}
	}
	return nil
}

// CheckExist checks the arguments of a BatchIsExist call the way every
// [Client] does: one result per key, no key empty or holding a NUL byte.
func CheckExist(keys []string, results []int32) error {
	if len(results) != len(keys) {
		return fmt.Errorf("%w: %d keys, %d results", ErrInvalidArgument, len(keys), len(results))
	}
	for i, k := range keys {
		if err := checkKey(i, k); err != nil {
			return err
		}
	}
	return nil
}

func checkKey(i int, k string) error {
	if k == "" {
		return fmt.Errorf("%w: key %d is empty", ErrInvalidArgument, i)
	}
	if strings.IndexByte(k, 0) >= 0 {
		return fmt.Errorf("%w: key %d (%q) holds a NUL byte", ErrInvalidArgument, i, k)
	}
	return nil
}
