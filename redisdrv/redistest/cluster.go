package redistest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

// Cluster is a Redis Cluster on 127.0.0.1 for tests: ClusterOptions.Nodes
// masters and no replicas, each a Server (a child of this process,
// persistence off) with its cluster bus on its port plus BusPortOffset,
// and, when proxied, a Proxy in front of each. StartCluster creates it
// with redis-cli --cluster create; Stop ends it.
//
// Nodes are named by index, 0 to len(Nodes())-1, in the order of Addrs;
// an index outside that range panics, as a slice's does. Its methods are
// safe for concurrent use.
type Cluster struct {
	opts    ClusterOptions
	log     *slog.Logger
	dir     string
	ownDir  bool      // dir was made by StartCluster, so Stop removes it
	nodes   []*Server // fixed once started
	proxies []*Proxy  // one per node when proxied, else nil
	ids     []string  // the nodes' IDs (CLUSTER MYID); nodes.conf keeps them

	mu      sync.Mutex
	clients []rueidis.Client // per node, for the cluster's own commands; made on first use
	stopped bool
}

// StartCluster checks binary (see Check) and redis-cli next to it
// (ErrNoCLI), starts o.Nodes cluster-enabled servers on ports p with
// p+BusPortOffset free too (picked again when a node exits at start
// because another program took one), and joins them with
//
//	redis-cli --cluster create 127.0.0.1:p1 … --cluster-replicas 0 --cluster-yes
//
// given the nodes' own addresses, the slots split evenly in node order.
// It returns once every node answers CLUSTER INFO with cluster_state:ok
// and all agree on who owns each of the NumSlots slots (see Settle),
// within o.StartTimeout and ctx. On error nothing it started is left
// running.
//
// Each node's redis.conf adds, before o.Extra: cluster-enabled yes,
// cluster-config-file nodes.conf, cluster-node-timeout (o.NodeTimeout),
// cluster-require-full-coverage no (the other nodes serve their slots
// while one is down), cluster-allow-reads-when-down no (a node that sees
// the cluster down answers CLUSTERDOWN, reads too) and
// cluster-announce-ip 127.0.0.1; proxied, cluster-announce-port (its
// proxy's) and cluster-announce-bus-port (its own bus port).
func StartCluster(ctx context.Context, binary string, o ClusterOptions) (*Cluster, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if _, err := Check(ctx, binary); err != nil {
		return nil, err
	}
	cli, err := findCLI(binary)
	if err != nil {
		return nil, err
	}
	c := &Cluster{opts: o, log: o.Logger, dir: o.Dir}
	if c.dir == "" {
		if c.dir, err = os.MkdirTemp("", "kvshare-redis-cluster-"); err != nil {
			return nil, fmt.Errorf("redistest: cluster folder: %w", err)
		}
		c.ownDir = true
	} else if c.dir, err = filepath.Abs(c.dir); err != nil {
		return nil, fmt.Errorf("redistest: cluster folder %q: %w", o.Dir, err)
	} else if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return nil, fmt.Errorf("redistest: cluster folder: %w", err)
	}
	began := time.Now()
	if err := c.form(ctx, binary, cli); err != nil {
		c.ownDir = false // keep the logs the error names
		return nil, errors.Join(err, c.Stop())
	}
	c.log.Info("redistest: cluster up", "nodes", len(c.nodes), "addrs", c.Addrs(), "proxied", o.Proxied,
		"after", time.Since(began).Round(time.Millisecond), "dir", c.dir)
	return c, nil
}

// form starts the nodes, reads their IDs, creates the cluster and waits
// for it to settle.
func (c *Cluster) form(ctx context.Context, binary, cli string) error {
	if err := c.startNodes(ctx, binary); err != nil {
		return err
	}
	c.ids = make([]string, len(c.nodes))
	for i := range c.nodes {
		id, err := c.do(ctx, i, "CLUSTER", "MYID").ToString()
		if err != nil {
			return fmt.Errorf("redistest: CLUSTER MYID on node %d (%s): %w", i, c.nodes[i].Addr(), err)
		}
		c.ids[i] = id
	}
	if err := c.create(ctx, cli); err != nil {
		return err
	}
	return c.Settle(ctx)
}

// Nodes are the cluster's servers, in node order.
func (c *Cluster) Nodes() []*Server { return append([]*Server(nil), c.nodes...) }

// Node is node i's server: its real address, PID, logs.
func (c *Cluster) Node(i int) *Server { return c.nodes[i] }

// Proxy is the proxy in front of node i, nil when the cluster is not
// proxied.
func (c *Cluster) Proxy(i int) *Proxy {
	if c.proxies == nil {
		return nil
	}
	return c.proxies[i]
}

// Addr is the address clients reach node i at, the one the cluster
// announces for it: its proxy's when proxied, else its own.
func (c *Cluster) Addr(i int) string {
	if c.proxies != nil {
		return c.proxies[i].Addr()
	}
	return c.nodes[i].Addr()
}

// Addrs are every node's Addr, in node order: the addresses a cluster
// client starts from (rueidis.ClientOption.InitAddress).
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.nodes))
	for i := range c.nodes {
		addrs[i] = c.Addr(i)
	}
	return addrs
}

// NodeID is node i's cluster ID, as CLUSTER MYID answered at start; it
// stays the same over Restart, which keeps nodes.conf.
func (c *Cluster) NodeID(i int) string { return c.ids[i] }

// Dir is the parent of the nodes' working folders (ClusterOptions.Dir,
// or the temporary one StartCluster made).
func (c *Cluster) Dir() string { return c.dir }

// Client returns a new rueidis client straight to node i (not through
// its proxy), one connection without client-side caching and without
// following redirects, as Server.Client: for seeding a node and for
// checking what it answers itself (MOVED, ASK). The caller closes it.
func (c *Cluster) Client(i int) (rueidis.Client, error) { return c.nodes[i].Client() }
