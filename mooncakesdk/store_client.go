package mooncakesdk

import (
	"bytes"
	"fmt"
	"runtime"
)

// storeClient is the [Client] over the loaded library: one handle whose
// setup succeeded.
type storeClient struct {
	lib    *library
	handle uintptr

	// guard keeps Destroy from overlapping a call (the library does not
	// allow it) and every call after Destroy from reaching the handle.
	guard HandleGuard
	// replicate is the replicate config of every put (nil: the store's
	// defaults, passed as NULL).
	replicate *replicate
}

var _ Client = (*storeClient)(nil)

// RegisterBuffer calls mooncake_store_register_buffer; see [Client].
func (c *storeClient) RegisterBuffer(addr uintptr, n uint64) error {
	if err := c.guard.Enter(); err != nil {
		return err
	}
	defer c.guard.Leave()
	if rc := c.lib.fn.registerBuffer(c.handle, addr, n); rc != 0 {
		return &CallError{Func: "mooncake_store_register_buffer", Code: Code(rc)}
	}
	return nil
}

// UnregisterBuffer calls mooncake_store_unregister_buffer; see [Client].
func (c *storeClient) UnregisterBuffer(addr uintptr) error {
	if err := c.guard.Enter(); err != nil {
		return err
	}
	defer c.guard.Leave()
	if rc := c.lib.fn.unregisterBuffer(c.handle, addr); rc != 0 {
		return &CallError{Func: "mooncake_store_unregister_buffer", Code: Code(rc)}
	}
	return nil
}

// BatchPutFrom packs keys and calls BatchPutFromList; see [Client].
func (c *storeClient) BatchPutFrom(keys []string, bufs []uintptr, sizes []uint64, results []int64) error {
	if err := CheckTransfer(keys, bufs, sizes, results); err != nil {
		return err
	}
	return withKeys(keys, func(l *KeyList) error { return c.BatchPutFromList(l, bufs, sizes, results) })
}

// BatchPutFromList calls mooncake_store_batch_put_from with the
// config's replicate settings (NULL, the store's defaults, when it sets
// none: one replica, no pin, no preferred segment); see [Client]. The library
// writes C ints into a pooled array; they are widened into results only
// when the call ran.
func (c *storeClient) BatchPutFromList(keys *KeyList, bufs []uintptr, sizes []uint64, results []int64) error {
	pc := getPutCodes(len(results))
	defer pc.put()
	err := c.batch("mooncake_store_batch_put_from", CheckTransferList(keys, bufs, sizes, results), keys, func(ptrs []*byte) int32 {
		return c.lib.fn.batchPutFrom(c.handle, ptrs, bufs, sizes, uint64(len(ptrs)), c.replicate.addr(), pc.codes)
	})
	if err != nil {
		return err
	}
	for i, code := range pc.codes {
		results[i] = int64(code)
	}
	return nil
}

// BatchGetInto packs keys and calls BatchGetIntoList; see [Client].
func (c *storeClient) BatchGetInto(keys []string, bufs []uintptr, sizes []uint64, results []int64) error {
	if err := CheckTransfer(keys, bufs, sizes, results); err != nil {
		return err
	}
	return withKeys(keys, func(l *KeyList) error { return c.BatchGetIntoList(l, bufs, sizes, results) })
}

// BatchGetIntoList calls mooncake_store_batch_get_into; see [Client].
// The library writes results only when it answers 0, so the caller's
// slice is its output array.
func (c *storeClient) BatchGetIntoList(keys *KeyList, bufs []uintptr, sizes []uint64, results []int64) error {
	return c.batch("mooncake_store_batch_get_into", CheckTransferList(keys, bufs, sizes, results), keys, func(ptrs []*byte) int32 {
		return c.lib.fn.batchGetInto(c.handle, ptrs, bufs, sizes, uint64(len(ptrs)), results)
	})
}

// BatchIsExist packs keys and calls BatchIsExistList; see [Client].
func (c *storeClient) BatchIsExist(keys []string, results []int32) error {
	if err := CheckExist(keys, results); err != nil {
		return err
	}
	return withKeys(keys, func(l *KeyList) error { return c.BatchIsExistList(l, results) })
}

// BatchIsExistList calls mooncake_store_batch_is_exist; see [Client].
func (c *storeClient) BatchIsExistList(keys *KeyList, results []int32) error {
	return c.batch("mooncake_store_batch_is_exist", CheckExistList(keys, results), keys, func(ptrs []*byte) int32 {
		return c.lib.fn.batchIsExist(c.handle, ptrs, uint64(len(ptrs)), results)
	})
}

// withKeys packs keys (already checked) into a pooled KeyList for call.
func withKeys(keys []string, call func(*KeyList) error) error {
	l := keyListPool.Get().(*KeyList)
	defer keyListPool.Put(l)
	if err := PackKeys(l, keys); err != nil {
		return err
	}
	return call(l)
}

// batch runs one batch call through the steps the three share: the
// argument check's verdict argErr, the call guard, no call at all for no
// keys (the library answers -1 to the NULL arrays an empty slice
// becomes), the list's buffer pinned and pointed at for the call, and
// the library's function-level answer, which is a [*CallError] naming fn
// unless it is 0. purego keeps every argument of call's C function, and
// the memory a slice argument points to, alive until the function
// returns.
func (c *storeClient) batch(fn string, argErr error, keys *KeyList, call func(cKeys []*byte) int32) error {
	if argErr != nil {
		return argErr
	}
	if err := c.guard.Enter(); err != nil {
		return err
	}
	defer c.guard.Leave()
	if keys.Len() == 0 {
		return nil
	}
	ck := pinKeys(keys)
	defer ck.release()
	rc := call(ck.ptrs)
	runtime.KeepAlive(keys)
	if rc != 0 {
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

// GetSize calls mooncake_store_get_size; see [Sizer].
func (c *storeClient) GetSize(key string) (int64, error) {
	if err := checkKey(0, key); err != nil {
		return 0, err
	}
	if err := c.guard.Enter(); err != nil {
		return 0, err
	}
	defer c.guard.Leave()
	n := c.lib.fn.getSize(c.handle, key)
	if n < 0 {
		return 0, &CallError{Func: "mooncake_store_get_size", Code: Code(n)}
	}
	return n, nil
}

// Remove calls mooncake_store_remove; see [Remover].
func (c *storeClient) Remove(key string, force bool) error {
	if err := checkKey(0, key); err != nil {
		return err
	}
	if err := c.guard.Enter(); err != nil {
		return err
	}
	defer c.guard.Leave()
	f := int32(0)
	if force {
		f = 1
	}
	if rc := c.lib.fn.remove(c.handle, key, f); rc != 0 {
		return &CallError{Func: "mooncake_store_remove", Code: Code(rc)}
	}
	return nil
}

// HealthCheck calls mooncake_store_health_check; see [Client].
func (c *storeClient) HealthCheck() error {
	if err := c.guard.Enter(); err != nil {
		return err
	}
	defer c.guard.Leave()
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
	return c.guard.Close(func() {
		c.lib.fn.destroy(c.handle)
		c.replicate.release()
	})
}

// hostname is the address the library registered this client under
// (host:port), for the log; "" if it does not say.
func (c *storeClient) hostname() string {
	buf := make([]byte, 512)
	if rc := c.lib.fn.getHostname(c.handle, buf, uint64(len(buf))); rc != 0 {
		return ""
	}
	name, _, _ := bytes.Cut(buf, []byte{0})
	return string(name)
}
