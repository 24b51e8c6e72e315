package conformance

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// consulted is a context that runs onConsult, once and on a goroutine of
// its own, the first time its Done, Err or Deadline is asked: the moment
// a driver's Drain looks at the context it must wait within. Waiting
// within a context, directly or through a context derived from it, asks
// one of the three, so a Drain that waits is seen doing so.
type consulted struct {
	context.Context
	onConsult func()

	once sync.Once
	seen atomic.Bool
}

// Each method reads its answer first and only then triggers onConsult,
// so the answer is the one from before: a Drain that asks Err when it
// starts gets nil, and only then does whatever onConsult does (let a
// held row go, end the context) happen.

func (c *consulted) Done() <-chan struct{} {
	defer c.consult()
	return c.Context.Done()
}

func (c *consulted) Err() error {
	defer c.consult()
	return c.Context.Err()
}

func (c *consulted) Deadline() (time.Time, bool) {
	defer c.consult()
	return c.Context.Deadline()
}

func (c *consulted) consult() {
	c.once.Do(func() {
		c.seen.Store(true)
		go c.onConsult()
	})
}

// looked reports whether Done, Err or Deadline was asked.
func (c *consulted) looked() bool { return c.seen.Load() }
