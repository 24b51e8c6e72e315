package redistest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/loopback"
)

// clusterPoll is how often the cluster's waits look again.
const clusterPoll = 50 * time.Millisecond

// client returns the cluster's own client to node i, made on first use
// (outside the lock: a dial may take a while).
func (c *Cluster) client(i int) (rueidis.Client, error) {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil, ErrStopped
	}
	if c.clients == nil {
		c.clients = make([]rueidis.Client, len(c.nodes))
	}
	cl := c.clients[i]
	c.mu.Unlock()
	if cl != nil {
		return cl, nil
	}
	cl, err := c.nodes[i].Client()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.stopped:
		cl.Close()
		return nil, ErrStopped
	case c.clients[i] != nil: // made meanwhile by another call
		cl.Close()
		return c.clients[i], nil
	}
	c.clients[i] = cl
	return cl, nil
}

// isStopped reports whether Stop was called.
func (c *Cluster) isStopped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopped
}

// dropClient closes the cluster's client to node i, if any, so the next
// command dials afresh.
func (c *Cluster) dropClient(i int) {
	c.mu.Lock()
	var cl rueidis.Client
	if c.clients != nil {
		cl, c.clients[i] = c.clients[i], nil
	}
	c.mu.Unlock()
	if cl != nil {
		cl.Close()
	}
}

// do runs one command on node i through the cluster's client, within
// StartTimeout and ctx.
func (c *Cluster) do(ctx context.Context, i int, args ...string) rueidis.RedisResult {
	cl, err := c.client(i)
	if err != nil {
		return rueidis.NewErrorResult(err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.StartTimeout)
	defer cancel()
	return cl.Do(ctx, cl.B().Arbitrary(args...).Build())
}

// text runs a command whose answer is text (CLUSTER INFO, CLUSTER
// NODES) on node i, as do does, and returns that text without the "txt:"
// a RESP3 verbatim string starts with.
func (c *Cluster) text(ctx context.Context, i int, args ...string) (string, error) {
	s, err := c.do(ctx, i, args...).ToString()
	return strings.TrimPrefix(s, "txt:"), err
}

// live reports whether node i runs and is not stopped by a signal
// (Freeze): whether it can answer now.
func (c *Cluster) live(i int) bool {
	pid := c.nodes[i].PID()
	return pid != 0 && loopback.ProcState(pid) != 'T'
}

// final reports whether a check's error is one waiting cannot mend: a
// node not running or frozen, the cluster stopped.
func final(err error) bool {
	return errors.Is(err, ErrNotRunning) || errors.Is(err, ErrState) || errors.Is(err, ErrStopped)
}

// await runs check every clusterPoll until it returns nil, returns an
// error final says waiting cannot mend, or bound or ctx ends; then the
// error says what was awaited and the last check's answer.
func (c *Cluster) await(ctx context.Context, bound time.Duration, what string, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	tick := time.NewTicker(clusterPoll)
	defer tick.Stop()
	var last error // the last answer not cut short by the end of ctx
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		if final(err) {
			return fmt.Errorf("redistest: waiting for %s: %w", what, err)
		}
		if last == nil || ctx.Err() == nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %s, not within %v (%w); last seen: %v", ErrCluster, what, bound, context.Cause(ctx), last)
		case <-tick.C:
		}
	}
}
