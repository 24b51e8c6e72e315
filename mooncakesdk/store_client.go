package mooncakesdk

import (
	"bytes"
	"fmt"
	"runtime"
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
// replicate config (the store's defaults); see [Client].
func (c *storeClient) BatchPutFrom(keys []string, bufs []uintptr, sizes []uint64, results []int64) error {
	if err := CheckTransfer(keys, bufs, sizes, results); err != nil {
		return err
	}
	if !c.enter() {
		return ErrClosed
	}
	defer c.mu.RUnlock()
	if len(keys) == 0 {
		return nil // the library answers -1 to a NULL array
	}
	ck := newCKeys(keys)
	defer ck.release()
	codes := make([]int32, len(keys))
	rc := c.lib.fn.batchPutFrom(c.handle, ck.ptrs, bufs, sizes, uint64(len(keys)), 0, codes)
	runtime.KeepAlive(bufs)
	runtime.KeepAlive(sizes)
	if rc != 0 {
		return &CallError{Func: "mooncake_store_batch_put_from", Code: Code(rc)}
	}
	for i, code := range codes {
		results[i] = int64(code)
	}
	return nil
}

// BatchGetInto calls mooncake_store_batch_get_into; see [Client].
func (c *storeClient) BatchGetInto(keys []string, bufs []uintptr, sizes []uint64, results []int64) error {
	if err := CheckTransfer(keys, bufs, sizes, results); err != nil {
		return err
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
	// The library writes results only when it answers 0, so the caller's
	// slice is passed as the output array.
	rc := c.lib.fn.batchGetInto(c.handle, ck.ptrs, bufs, sizes, uint64(len(keys)), results)
	runtime.KeepAlive(bufs)
	runtime.KeepAlive(sizes)
	runtime.KeepAlive(results)
	if rc != 0 {
		return &CallError{Func: "mooncake_store_batch_get_into", Code: Code(rc)}
	}
	return nil
}

// BatchIsExist calls mooncake_store_batch_is_exist; see [Client].
func (c *storeClient) BatchIsExist(keys []string, results []int32) error {
	if err := CheckExist(keys, results); err != nil {
		return err
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
	rc := c.lib.fn.batchIsExist(c.handle, ck.ptrs, uint64(len(keys)), results)
	runtime.KeepAlive(results)
	if rc != 0 {
		return &CallError{Func: "mooncake_store_batch_is_exist", Code: Code(rc)}
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
