package mooncakedrv

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/conformance"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// sharedClient is one real client of a pool that every conformance
// subject of a run drives through a view of its own (suiteClient):
// destroying a Mooncake client takes about a second, and the suite builds
// a fresh driver for each of its ~80 checks. At the end of the test it is
// destroyed, when every view was destroyed by its driver (so every
// driver drained true and unregistered its regions); otherwise it is
// kept for the life of the process.
type sharedClient struct {
	c mooncakesdk.Client

	mu           sync.Mutex
	views, ended int
}

// openSharedClient opens the shared client of s (mooncakesdk.Open, the
// pool's store config).
func openSharedClient(t *testing.T, s *realStore) *sharedClient {
	t.Helper()
	cfg, err := mooncakesdk.LoadStoreConfig(s.config)
	require.NoError(t, err)
	ctx, cancel := bound(t, realWait, "opening a client").Context(context.Background())
	defer cancel()
	c, err := mooncakesdk.Open(ctx, cfg, nil)
	require.NoError(t, err)
	sc := &sharedClient{c: c}
	t.Cleanup(func() {
		sc.mu.Lock()
		defer sc.mu.Unlock()
		if sc.views != sc.ended {
			clientsKept.Add(1)
			t.Logf("shared client kept: %d of its %d drivers were not closed", sc.views-sc.ended, sc.views)
			return
		}
		if err := c.Destroy(); err != nil {
			t.Errorf("destroying the shared client: %v", err)
		}
	})
	return sc
}

// view returns a new view of the shared client for one driver.
func (sc *sharedClient) view() *suiteClient {
	sc.mu.Lock()
	sc.views++
	sc.mu.Unlock()
	return &suiteClient{Client: sc.c, shared: sc}
}

// suiteClient is a conformance subject's client: the run's shared real
// client, whose put-from and get-into calls can be held at the SDK
// boundary (the Hold hook: the call is taken by the driver's worker and
// blocks before it reaches the store, then the real store serves it), and
// whose Destroy ends only this view (later calls answer ErrClosed, as a
// destroyed client's do; the shared client lives on).
type suiteClient struct {
	mooncakesdk.Client
	shared *sharedClient

	mu      sync.Mutex
	closed  bool
	putGate *holdGate
	getGate *holdGate
	// failRegister: the next register_buffer panics once the real store
	// registered the buffer (the FailNextRegistration hook).
	failRegister bool
}

// failNextRegister makes the next register_buffer panic once the real
// store registered the buffer: a registration that may be live.
func (c *suiteClient) failNextRegister() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failRegister = true
}

// hold installs a gate on every later call in dir.
func (c *suiteClient) hold(dir conformance.Direction) conformance.Gate {
	g := newHoldGate()
	c.mu.Lock()
	defer c.mu.Unlock()
	if dir == conformance.PutDir {
		c.putGate = g
	} else {
		c.getGate = g
	}
	return g
}

// enter returns ErrClosed once the view was destroyed, and otherwise
// waits at the direction's gate, if one is installed.
func (c *suiteClient) enter(gate func() *holdGate) error {
	c.mu.Lock()
	closed, g := c.closed, (*holdGate)(nil)
	if gate != nil {
		g = gate()
	}
	c.mu.Unlock()
	if closed {
		return mooncakesdk.ErrClosed
	}
	if g != nil {
		g.wait()
	}
	return nil
}

func (c *suiteClient) puts() *holdGate { return c.putGate }
func (c *suiteClient) gets() *holdGate { return c.getGate }

func (c *suiteClient) RegisterBuffer(addr uintptr, n uint64) error {
	if err := c.enter(nil); err != nil {
		return err
	}
	err := c.Client.RegisterBuffer(addr, n)
	c.mu.Lock()
	fail := c.failRegister && err == nil
	c.failRegister = c.failRegister && !fail
	c.mu.Unlock()
	if fail {
		panic("kvshare test: register_buffer panicked after the store registered the buffer")
	}
	return err
}

func (c *suiteClient) UnregisterBuffer(addr uintptr) error {
	if err := c.enter(nil); err != nil {
		return err
	}
	return c.Client.UnregisterBuffer(addr)
}

func (c *suiteClient) BatchPutFromList(keys *mooncakesdk.KeyList, bufs []uintptr, sizes []uint64, results []int64) error {
	if err := c.enter(c.puts); err != nil {
		return err
	}
	return c.Client.BatchPutFromList(keys, bufs, sizes, results)
}

func (c *suiteClient) BatchGetIntoList(keys *mooncakesdk.KeyList, bufs []uintptr, sizes []uint64, results []int64) error {
	if err := c.enter(c.gets); err != nil {
		return err
	}
	return c.Client.BatchGetIntoList(keys, bufs, sizes, results)
}

func (c *suiteClient) BatchIsExistList(keys *mooncakesdk.KeyList, results []int32) error {
	if err := c.enter(nil); err != nil {
		return err
	}
	return c.Client.BatchIsExistList(keys, results)
}

func (c *suiteClient) BatchPutFrom(keys []string, bufs []uintptr, sizes []uint64, results []int64) error {
	if err := c.enter(c.puts); err != nil {
		return err
	}
	return c.Client.BatchPutFrom(keys, bufs, sizes, results)
}

func (c *suiteClient) BatchGetInto(keys []string, bufs []uintptr, sizes []uint64, results []int64) error {
	if err := c.enter(c.gets); err != nil {
		return err
	}
	return c.Client.BatchGetInto(keys, bufs, sizes, results)
}

func (c *suiteClient) BatchIsExist(keys []string, results []int32) error {
	if err := c.enter(nil); err != nil {
		return err
	}
	return c.Client.BatchIsExist(keys, results)
}

func (c *suiteClient) HealthCheck() error {
	if err := c.enter(nil); err != nil {
		return err
	}
	return c.Client.HealthCheck()
}

// Destroy ends the view: the driver that owned it closed.
func (c *suiteClient) Destroy() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return mooncakesdk.ErrClosed
	}
	c.closed = true
	c.shared.mu.Lock()
	c.shared.ended++
	c.shared.mu.Unlock()
	return nil
}

// holdGate holds the calls that reach it until Release.
type holdGate struct {
	reached, open chan struct{}
	reach, rel    sync.Once
}

func newHoldGate() *holdGate {
	return &holdGate{reached: make(chan struct{}), open: make(chan struct{})}
}

func (g *holdGate) wait() {
	g.reach.Do(func() { close(g.reached) })
	<-g.open
}

// Held waits within ctx until a call is held at the gate.
func (g *holdGate) Held(ctx context.Context) error {
	select {
	case <-g.reached:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Release lets every held call go on and holds no more.
func (g *holdGate) Release() { g.rel.Do(func() { close(g.open) }) }
