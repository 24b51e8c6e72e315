package redistest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// badFlags are the CLUSTER NODES flags of a node that is not fully in
// the cluster, from the answering node's view.
var badFlags = []string{"fail?", "fail", "handshake", "noaddr"}

// view is node i's CLUSTER NODES answer, parsed.
func (c *Cluster) view(ctx context.Context, i int) ([]nodeLine, error) {
	text, err := c.text(ctx, i, "CLUSTER", "NODES")
	if err != nil {
		return nil, fmt.Errorf("redistest: CLUSTER NODES on node %d: %w", i, err)
	}
	return parseNodes(text)
}

// index is the node index of the cluster's node with ID id, -1 when none.
func (c *Cluster) index(id string) int { return slices.Index(c.ids, id) }

// owners is the slot map in a view: the index of the node owning each
// slot, -1 for a slot no node owns.
func (c *Cluster) owners(lines []nodeLine) ([]int, error) {
	owners := make([]int, NumSlots)
	for s := range owners {
		owners[s] = -1
	}
	for _, l := range lines {
		k := c.index(l.id)
		if k < 0 {
			if len(l.slots) == 0 {
				continue
			}
			return nil, fmt.Errorf("%w: slots %v owned by %s (%s), not a node of this cluster", ErrCluster, l.slots, l.id, l.addr)
		}
		for _, r := range l.slots {
			for s := r[0]; s <= r[1]; s++ {
				owners[s] = k
			}
		}
	}
	return owners, nil
}

// liveView is the view of the first node that is live and answers, and
// that node's index.
func (c *Cluster) liveView(ctx context.Context) ([]nodeLine, int, error) {
	if c.isStopped() {
		return nil, -1, ErrStopped
	}
	var errs []error
	for i := range c.nodes {
		if !c.live(i) {
			continue
		}
		lines, err := c.view(ctx, i)
		if err == nil {
			return lines, i, nil
		}
		errs = append(errs, err)
	}
	return nil, -1, fmt.Errorf("%w: no node is running, unfrozen and answering: %w", ErrNotRunning, errors.Join(errs...))
}

// SlotMap returns the owner of every slot, NumSlots node indices (-1 for
// a slot no node owns), as the first live node (running and not frozen)
// sees them now.
func (c *Cluster) SlotMap(ctx context.Context) ([]int, error) {
	lines, _, err := c.liveView(ctx)
	if err != nil {
		return nil, err
	}
	return c.owners(lines)
}

// Owner is the index of the node owning slot now, as the first live node
// sees it; ErrCluster when no node owns it.
func (c *Cluster) Owner(ctx context.Context, slot int) (int, error) {
	if slot < 0 || slot >= NumSlots {
		return -1, fmt.Errorf("%w: slot %d is not between 0 and %d", ErrOptions, slot, NumSlots-1)
	}
	owners, err := c.SlotMap(ctx)
	if err != nil {
		return -1, err
	}
	if owners[slot] < 0 {
		return -1, fmt.Errorf("%w: no node owns slot %d", ErrCluster, slot)
	}
	return owners[slot], nil
}

// keysOnTries bounds how many candidate keys KeysOn hashes.
const keysOnTries = 1 << 24

// KeysOn returns n distinct keys, prefix followed by a number, whose
// slots node i owns now (see SlotMap), for tests that need rows on chosen
// nodes; ErrCluster when the node owns no slot.
func (c *Cluster) KeysOn(ctx context.Context, i, n int, prefix string) ([]string, error) {
	_ = c.nodes[i]
	if n < 0 {
		return nil, fmt.Errorf("%w: KeysOn of %d keys", ErrOptions, n)
	}
	owners, err := c.SlotMap(ctx)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(owners, i) {
		return nil, fmt.Errorf("%w: node %d owns no slot", ErrCluster, i)
	}
	keys := make([]string, 0, n)
	for j := 0; len(keys) < n; j++ {
		if j == keysOnTries {
			return nil, fmt.Errorf("%w: %d of %d keys on node %d in %d tries", ErrCluster, len(keys), n, i, keysOnTries)
		}
		if k := prefix + strconv.Itoa(j); owners[Slot(k)] == i {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// Settle waits until the cluster is whole: every node runs and answers
// CLUSTER INFO with cluster_state:ok; each knows every node, at the
// address it announces, as a connected master not flagged fail?, fail,
// handshake or noaddr; every slot has an owner; and every node's slot map
// is the same. It is bounded by StartTimeout plus twice NodeTimeout (the
// time the others take to clear a restarted node's fail flag) and ctx,
// and fails at once when a node is not running (ErrNotRunning) or frozen
// (ErrState), or after Stop (ErrStopped).
func (c *Cluster) Settle(ctx context.Context) error {
	return c.await(ctx, c.opts.settleBound(), "every node of the cluster settled", c.settled)
}

// settled returns nil when the cluster is whole (see Settle), else what
// is not yet.
func (c *Cluster) settled(ctx context.Context) error {
	if c.isStopped() {
		return ErrStopped
	}
	for i := range c.nodes {
		switch {
		case c.nodes[i].PID() == 0:
			return fmt.Errorf("%w: cluster node %d (%s)", ErrNotRunning, i, c.nodes[i].Addr())
		case !c.live(i):
			return fmt.Errorf("%w: cluster node %d (%s) is frozen", ErrState, i, c.nodes[i].Addr())
		}
	}
	var first []int
	for i := range c.nodes {
		text, err := c.text(ctx, i, "CLUSTER", "INFO")
		if err != nil {
			return fmt.Errorf("CLUSTER INFO on node %d: %w", i, err)
		}
		if state := parseInfo(text)["cluster_state"]; state != "ok" {
			return fmt.Errorf("node %d: cluster_state:%s", i, state)
		}
		lines, err := c.view(ctx, i)
		if err != nil {
			return err
		}
		if err := c.whole(i, lines); err != nil {
			return err
		}
		owners, err := c.owners(lines)
		if err != nil {
			return err
		}
		if s := slices.Index(owners, -1); s >= 0 {
			return fmt.Errorf("node %d sees no owner of slot %d", i, s)
		}
		if first == nil {
			first = owners
		} else if s := firstDifference(first, owners); s >= 0 {
			return fmt.Errorf("node 0 sees slot %d on node %d, node %d on node %d", s, first[s], i, owners[s])
		}
	}
	return nil
}

// whole returns nil when node i's view holds every node once, at its
// announced address, as a connected master without badFlags, itself
// flagged myself.
func (c *Cluster) whole(i int, lines []nodeLine) error {
	if len(lines) != len(c.nodes) {
		return fmt.Errorf("node %d knows %d nodes, not %d", i, len(lines), len(c.nodes))
	}
	for _, l := range lines {
		k := c.index(l.id)
		switch {
		case k < 0:
			return fmt.Errorf("node %d knows %s (%s), not a node of this cluster", i, l.id, l.addr)
		case l.has("myself") != (k == i):
			return fmt.Errorf("node %d flags node %d %v", i, k, l.flags)
		case !l.has("master") || slices.ContainsFunc(badFlags, l.has):
			return fmt.Errorf("node %d sees node %d flagged %v", i, k, l.flags)
		case !l.connected:
			return fmt.Errorf("node %d has no bus link to node %d", i, k)
		case l.addr != c.Addr(k):
			return fmt.Errorf("node %d sees node %d at %s, not %s", i, k, l.addr, c.Addr(k))
		}
	}
	return nil
}

// firstDifference is the first index where a and b differ, -1 when none.
func firstDifference(a, b []int) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// WaitFailed waits until every other live node (running, not frozen)
// flags node i failed ("fail": most masters agreed it has not answered
// for NodeTimeout), as after Kill or a long Freeze; bounded by
// StartTimeout plus four times NodeTimeout, and ctx.
func (c *Cluster) WaitFailed(ctx context.Context, i int) error {
	_ = c.nodes[i]
	bound := c.opts.StartTimeout + 4*c.opts.NodeTimeout
	return c.await(ctx, bound, fmt.Sprintf("node %d flagged fail by the other nodes", i), func(ctx context.Context) error {
		asked := 0
		for k := range c.nodes {
			if k == i || !c.live(k) {
				continue
			}
			lines, err := c.view(ctx, k)
			if err != nil {
				return err
			}
			at := slices.IndexFunc(lines, func(l nodeLine) bool { return l.id == c.ids[i] })
			if at < 0 || !lines[at].has("fail") {
				return fmt.Errorf("node %d does not flag node %d fail", k, i)
			}
			asked++
		}
		if asked == 0 {
			return fmt.Errorf("%w: no other node is live to ask", ErrNotRunning)
		}
		return nil
	})
}
