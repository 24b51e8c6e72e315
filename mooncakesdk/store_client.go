package mooncakesdk

import (
	"bytes"
	"fmt"
	"sync"
)

// storeClient is the [Client] over the loaded library: one handle whose
// setup succeeded.
type storeClient struct {
	lib    *library
	handle uintptr

	// mu is held shared by every call and exclusively by Destroy, so
	// Destroy never overlaps a call (the library does not allow it).
	mu        sync.RWMutex
	destroyed bool
}

var _ Client = (*storeClient)(nil)

// enter takes the call lock; false when the client was destroyed.
func (c *storeClient) enter() bool {
	c.mu.RLock()
	if c.destroyed {
		c.mu.RUnlock()
		return false
	}
	return true
}

// RegisterBuffer calls mooncake_store_register_buffer; see [Client].
func (c *storeClient) RegisterBuffer(addr uintptr, n uint64) error {
	if !c.enter() {
		return ErrClosed
	}
	defer c.mu.RUnlock()
	if rc := c.lib.fn.registerBuffer(c.handle, addr, n); rc != 0 {
		return &CallError{Func: "mooncake_store_register_buffer", Code: Code(rc)}
	}
	return nil
}

// UnregisterBuffer calls mooncake_store_unregister_buffer; see [Client].
func (c *storeClient) UnregisterBuffer(addr uintptr) error {
	if !c.enter() {
		return ErrClosed
	}
	defer c.mu.RUnlock()
	if rc := c.lib.fn.unregisterBuffer(c.handle, addr); rc != 0 {
		return &CallError{Func: "mooncake_store_unregister_buffer", Code: Code(rc)}
	}
	return nil
}

// BatchPutFrom calls mooncake_store_batch_put_from with a NULL
// replicate config (the store's defaults); see [Client]. The library
// writes C ints; they are widened into results only when the call ran.
func (c *storeClient) BatchPutFrom(keys []string, bufs []uintptr, sizes []uint64, results []int64) error {
	codes := make([]int32, len(results))
	err := c.batch("mooncake_store_batch_put_from", CheckTransfer(keys, bufs, sizes, results), keys, func(ptrs []*byte) int32 {
		return c.lib.fn.batchPutFrom(c.handle, ptrs, bufs, sizes, uint64(len(keys)), 0, codes)
	})
	if err != nil {
		return err
	}
	for i, code := range codes {
		results[i] = int64(code)
	}
	return nil
}

// BatchGetInto calls mooncake_store_batch_get_into; see [Client]. The
// library writes results only when it answers 0, so the caller's slice
// is its output array.
func (c *storeClient) BatchGetInto(keys []string, bufs []uintptr, sizes []uint64, results []int64) error {
	return c.batch("mooncake_store_batch_get_into", CheckTransfer(keys, bufs, sizes, results), keys, func(ptrs []*byte) int32 {
		return c.lib.fn.batchGetInto(c.handle, ptrs, bufs, sizes, uint64(len(keys)), results)
	})
}

// BatchIsExist calls mooncake_store_batch_is_exist; see [Client].
func (c *storeClient) BatchIsExist(keys []string, results []int32) error {
	return c.batch("mooncake_store_batch_is_exist", CheckExist(keys, results), keys, func(ptrs []*byte) int32 {
		return c.lib.fn.batchIsExist(c.handle, ptrs, uint64(len(keys)), results)
	})
}

// batch runs one batch call through the steps the three share: the
// argument check's verdict argErr, the call lock, no call at all for no
// keys (the library answers -1 to the NULL arrays an empty slice
// becomes), the keys laid out as C strings for the call, and the
// library's function-level answer, which is a [*CallError] naming fn
// unless it is 0. purego keeps every argument of call's C function, and
// the memory a slice argument points to, alive until the function
// returns.
func (c *storeClient) batch(fn string, argErr error, keys []string, call func(cKeys []*byte) int32) error {
	if argErr != nil {
		return argErr
	}
	if !c.enter() {
		return ErrClosed
	}
	defer c.mu.RUnlock()
	if len(keys) == 0 {
		return nil
	}
	ck := newCKeys(keys)
	defer ck.release()
	if rc := call(ck.ptrs); rc != 0 {
		return &CallError{Func: fn, Code: Code(rc)}
	}
	return nil
}

// The health check's own answers (positive, unlike the rest of the ABI).
const (
	healthHealthy           = 0
	healthNotInitialized    = 1
	healthMasterUnreachable = 2
)

// HealthCheck calls mooncake_store_health_check; see [Client].
func (c *storeClient) HealthCheck() error {
	if !c.enter() {
		return ErrClosed
	}
	defer c.mu.RUnlock()
	switch rc := c.lib.fn.healthCheck(c.handle); rc {
	case healthHealthy:
		return nil
	case healthNotInitialized:
		return fmt.Errorf("%w: not initialised or closed (health check answered %d)", ErrUnhealthy, rc)
	case healthMasterUnreachable:
		return fmt.Errorf("%w: master unreachable (health check answered %d)", ErrUnhealthy, rc)
	default:
		return &CallError{Func: "mooncake_store_health_check", Code: Code(rc)}
	}
}

// Destroy calls mooncake_store_destroy once no call is in progress;
// see [Client].
func (c *storeClient) Destroy() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.destroyed {
		return ErrClosed
	}
	c.destroyed = true
	c.lib.fn.destroy(c.handle)
	return nil
}

// hostname is the address the library registered this client under
// (host:port), for the log; "" if it does not say.
func (c *storeClient) hostname() string {
	buf := make([]byte, 512)
	if rc := c.lib.fn.getHostname(c.handle, buf, uint64(len(buf))); rc != 0 {
		return ""
	}
	if i := bytes.IndexByte(buf, 0); i >= 0 {
		buf = buf[:i]
	}
	return string(buf)
}
