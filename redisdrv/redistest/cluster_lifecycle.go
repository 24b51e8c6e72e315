package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
)

// Stop stops every node (as Server.Stop does) and closes every proxy. It
// is idempotent and fits t.Cleanup; after it the cluster starts nothing
// more (ErrStopped). The temporary folder StartCluster made is removed
// once every node is gone; an error names a node that survived.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil
	}
	c.stopped = true
	clients := c.clients
	c.clients = nil
	c.mu.Unlock()
	for _, cl := range clients {
		if cl != nil {
			cl.Close()
		}
	}
	var errs []error
	for i, s := range c.nodes {
		if err := s.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("redistest: stopping cluster node %d: %w", i, err))
		}
	}
	for i, p := range c.proxies {
		if err := p.Close(); err != nil {
			errs = append(errs, fmt.Errorf("redistest: closing the proxy of cluster node %d: %w", i, err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if c.ownDir {
		if err := os.RemoveAll(c.dir); err != nil {
			return fmt.Errorf("redistest: removing %s: %w", c.dir, err)
		}
	}
	return nil
}

// Kill SIGKILLs node i, as a crash would (see Server.Kill). The other
// nodes go on serving their own slots (cluster-require-full-coverage
// no) and answer MOVED to node i for its slots, before and after they
// flag it failed (WaitFailed); the cluster has no replica to promote.
// Through its proxy, a connection to node i is accepted and closed at
// once; straight, it is refused.
func (c *Cluster) Kill(i int) error {
	err := c.nodes[i].Kill()
	c.dropClient(i)
	return err
}

// Restart stops node i if it runs and starts it again on the same ports
// and folder (see Server.Restart), then waits until the cluster settles
// (Settle). The node comes back empty of keys, with the ID, epoch and
// slots its nodes.conf kept, so it rejoins and serves the same slots,
// after the two seconds a restarted master waits before it calls the
// cluster ok.
func (c *Cluster) Restart(ctx context.Context, i int) error {
	c.dropClient(i)
	if err := c.nodes[i].Restart(ctx); err != nil {
		return err
	}
	id, err := c.do(ctx, i, "CLUSTER", "MYID").ToString()
	if err != nil {
		return fmt.Errorf("redistest: CLUSTER MYID on restarted node %d: %w", i, err)
	}
	if id != c.ids[i] {
		return fmt.Errorf("%w: node %d came back as %s, not %s (its nodes.conf was lost)", ErrCluster, i, id, c.ids[i])
	}
	return c.Settle(ctx)
}

// Freeze stops node i with SIGSTOP (see Server.Freeze). Past NodeTimeout
// the others flag it fail? and then fail; after Resume they clear the
// flags again, which Settle waits for.
func (c *Cluster) Freeze(i int) error { return c.nodes[i].Freeze() }

// Resume continues node i after Freeze (see Server.Resume).
func (c *Cluster) Resume(i int) error { return c.nodes[i].Resume() }

// ClusterForTest starts a cluster for t with o: the binary from Require
// (so t skips when the tier is off), the folders under t.TempDir() when
// o.Dir is empty, the events in t's output when o.Logger is nil, stopped
// with the test (the nodes' log tails in t's output when it failed). It
// fails t when the cluster does not start.
func ClusterForTest(t testing.TB, o ClusterOptions) *Cluster {
	t.Helper()
	binary := forTest(t, &o.Dir, &o.Logger)
	c, err := StartCluster(t.Context(), binary, o)
	if err != nil {
		t.Fatalf("starting a redis cluster with %s: %v", binary, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, s := range c.nodes {
				t.Logf("cluster node %d: redis-server log %s (tail):\n%s", i, s.LogPath(), s.LogTail())
			}
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stopping the redis cluster: %v", err)
		}
	})
	return c
}
