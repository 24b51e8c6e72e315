package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/redisdrv"
	"github.com/kvshare/kvshare/redisdrv/slotmap"
)

// redisNodes are the raw clients the floor, the plain loop and the
// deletes send a key's commands on, each built from the store file's
// client option as the driver builds its own: the one server's, or on a
// cluster one a node, the node serving the key's slot in the slot map
// read when the rig was built. (The driver reads the map for itself;
// both follow the same cluster, whose slots do not move while the
// benchmark runs.)
type redisNodes struct {
	clients []rueidis.Client
	addrs   []string
	slots   *slotmap.Map // nil for one server
}

// openRedisNodes connects to the server sc names, or reads the slot map
// of the cluster it names from the first seed that answers and connects
// to every node of it; a map that leaves a slot unserved is refused. On
// error nothing is left open.
func openRedisNodes(ctx context.Context, sc redisdrv.StoreConfig) (*redisNodes, error) {
	opt, err := sc.ClientOption()
	if err != nil {
		return nil, err
	}
	if !sc.Redis.Cluster {
		c, err := rueidis.NewClient(opt)
		if err != nil {
			return nil, fmt.Errorf("bench: connecting to %s: %w", sc.Redis.Address, err)
		}
		return &redisNodes{clients: []rueidis.Client{c}, addrs: []string{sc.Redis.Address}}, nil
	}
	m, err := readSlots(ctx, opt, sc.Redis.Seeds())
	if err != nil {
		return nil, err
	}
	if gaps := m.Gaps(); len(gaps) > 0 {
		return nil, fmt.Errorf("bench: the cluster of %s serves %d of %d slots (none serves %s): measurement 7 needs every slot served", sc.File, m.Covered(), slotmap.Slots, gaps[0])
	}
	n := &redisNodes{addrs: m.Addrs, slots: &m}
	for _, addr := range m.Addrs {
		c, err := rueidis.NewClient(slotmap.NodeOption(opt, addr))
		if err != nil {
			n.close()
			return nil, fmt.Errorf("bench: connecting to cluster node %s: %w", addr, err)
		}
		n.clients = append(n.clients, c)
	}
	return n, nil
}

// readSlots reads the slot map from the first of seeds that answers.
func readSlots(ctx context.Context, opt rueidis.ClientOption, seeds []string) (slotmap.Map, error) {
	var errs []error
	for _, seed := range seeds {
		c, err := rueidis.NewClient(slotmap.NodeOption(opt, seed))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", seed, err))
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, closeTimeout)
		m, err := slotmap.Read(sctx, c, seed)
		cancel()
		c.Close()
		if err == nil {
			return m, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", seed, err))
	}
	return slotmap.Map{}, fmt.Errorf("bench: no seed of [%s] answered CLUSTER SLOTS: %w", strings.Join(seeds, " "), errors.Join(errs...))
}

// cluster reports whether the nodes are a cluster's.
func (n *redisNodes) cluster() bool { return n.slots != nil }

// of is the index of the client that serves key.
func (n *redisNodes) of(key string) int {
	if n.slots == nil {
		return 0
	}
	return n.slots.Node(key) // every slot is served (openRedisNodes)
}

// split cuts each part into one a node, in node order: the rows of each
// node as a pipeline of their own, as the driver sends them.
func (n *redisNodes) split(parts []redisPart) [][]redisPart {
	out := make([][]redisPart, len(parts))
	for i, p := range parts {
		if !n.cluster() {
			out[i] = []redisPart{p}
			continue
		}
		byNode := make([]*redisPart, len(n.clients))
		for j, k := range p.keys {
			at := n.of(k)
			g := byNode[at]
			if g == nil {
				g = &redisPart{node: at}
				byNode[at] = g
			}
			g.keys = append(g.keys, k)
			g.slots = append(g.slots, p.slots[j])
			g.bytes += int64(len(p.slots[j]))
		}
		for _, g := range byNode {
			if g != nil {
				out[i] = append(out[i], *g)
			}
		}
	}
	return out
}

// close closes every client.
func (n *redisNodes) close() {
	for _, c := range n.clients {
		c.Close()
	}
}
