package fakesdk

import (
	"fmt"
	"strings"
	"sync"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// Client is one client of a [Store], implementing [mooncakesdk.Client]
// with the real store's answers (see the package doc). Its methods may be
// called concurrently; Destroy waits for calls in progress.
type Client struct {
	store *Store

	guard mooncakesdk.HandleGuard // calls enter it, Destroy closes it

	regMu   sync.Mutex
	regions map[uintptr]uint64 // registered buffers: start → length

	// torn is closed by Destroy: a transfer of this client still running
	// after its call answered ([Fault.Running]) ends without touching
	// memory, and Destroy waits for it (stragglers).
	torn       chan struct{}
	stragglers sync.WaitGroup
}

var (
	_ mooncakesdk.Client  = (*Client)(nil)
	_ mooncakesdk.Sizer   = (*Client)(nil)
	_ mooncakesdk.Remover = (*Client)(nil)
)

// RegisterBuffer records the region. It answers -1 for addr 0 or n 0 and
// INVALID_PARAMS (-600) for a region overlapping one already registered.
func (c *Client) RegisterBuffer(addr uintptr, n uint64) error {
	return c.controlCall(Register, func() error {
		if addr == 0 || n == 0 {
			return &mooncakesdk.CallError{Func: Register.cFunc(), Code: mooncakesdk.InternalError}
		}
		c.regMu.Lock()
		defer c.regMu.Unlock()
		for start, size := range c.regions {
			if addr < start+uintptr(size) && start < addr+uintptr(n) {
				return &mooncakesdk.CallError{Func: Register.cFunc(), Code: mooncakesdk.InvalidParams}
			}
		}
		c.regions[addr] = n
		return nil
	})
}

// UnregisterBuffer forgets the region starting at addr; INVALID_PARAMS
// (-600) when none starts there. Like the real store, it does not check
// whether a transfer still touches the memory.
func (c *Client) UnregisterBuffer(addr uintptr) error {
	return c.controlCall(Unregister, func() error {
		c.regMu.Lock()
		defer c.regMu.Unlock()
		if _, ok := c.regions[addr]; !ok {
			return &mooncakesdk.CallError{Func: Unregister.cFunc(), Code: mooncakesdk.InvalidParams}
		}
		delete(c.regions, addr)
		return nil
	})
}

// registered reports whether [addr, addr+n) lies inside one region.
func (c *Client) registered(addr uintptr, n uint64) bool {
	c.regMu.Lock()
	defer c.regMu.Unlock()
	for start, size := range c.regions {
		if addr >= start && uint64(addr-start)+n <= size {
			return true
		}
	}
	return false
}

// Remove removes the complete object under key (the fake grants no
// leases, so force changes nothing): OBJECT_NOT_FOUND (-704) when there
// is none, and the key stays in flight, answering -704 too, while a put
// of it is (the real master refuses to remove a key being written). See
// [mooncakesdk.Remover].
func (c *Client) Remove(key string, force bool) error {
	if key == "" || strings.IndexByte(key, 0) >= 0 {
		return fmt.Errorf("%w: key %q", mooncakesdk.ErrInvalidArgument, key)
	}
	return c.controlCall(Remove, func() error {
		if !c.store.remove(key) {
			return &mooncakesdk.CallError{Func: Remove.cFunc(), Code: mooncakesdk.ObjectNotFound}
		}
		return nil
	})
}

// GetSize answers the size of the complete object under key (see
// [mooncakesdk.Sizer]): REPLICA_IS_NOT_READY (-703) while a put of it is
// in flight (claimed, as a get finds it), OBJECT_NOT_FOUND (-704) for an
// absent or vanished key, each a [*mooncakesdk.CallError]; a malformed
// key is [mooncakesdk.ErrInvalidArgument] and reaches nothing. Counted
// in [Calls].Size. A [Fault] on Size strikes it as one on Remove does:
// Code is the function's own answer, Fail, Panic and Hold as for any
// call. The fake grants no leases.
func (c *Client) GetSize(key string) (int64, error) {
	if key == "" || strings.IndexByte(key, 0) >= 0 {
		return 0, fmt.Errorf("%w: key %q", mooncakesdk.ErrInvalidArgument, key)
	}
	var n int64
	err := c.controlCall(Size, func() error {
		var code mooncakesdk.Code
		if n, code = c.store.size(key); code != mooncakesdk.OK {
			return &mooncakesdk.CallError{Func: Size.cFunc(), Code: code}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// HealthCheck answers healthy unless a fault says otherwise.
func (c *Client) HealthCheck() error {
	return c.controlCall(Health, func() error { return nil })
}

// Destroy ends the client; its objects stay in the store, as objects on
// other processes' segments do (a test makes them vanish with
// [Store.Vanish] or a Vanish fault). Like the real client's teardown,
// which joins its transfer threads and closes their sockets, it ends
// every transfer of the client still running after its call answered
// ([Fault.Running]) without letting it touch memory, and returns once
// they have all ended. Later calls answer ErrClosed.
func (c *Client) Destroy() error {
	return c.guard.Close(func() {
		close(c.torn)
		c.stragglers.Wait()
		c.store.mu.Lock()
		c.store.calls.Destroy++
		c.store.mu.Unlock()
	})
}
