package redistest

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kvshare/kvshare/redisdrv/internal/keyslot"
)

// ClusterOptions says how to start a Redis Cluster. The zero value is
// usable: three masters, no memory limit, a one-second node timeout,
// folders in a temporary one removed by Stop.
type ClusterOptions struct {
	// Nodes is how many masters the cluster has, each a Server, between
	// MinClusterNodes and MaxClusterNodes; 0 is DefaultClusterNodes.
	// The cluster has no replicas.
	Nodes int
	// MaxMemory is each node's maxmemory, as Options.MaxMemory.
	MaxMemory int64
	// Policy is each node's maxmemory-policy, as Options.Policy.
	Policy string
	// NodeTimeout is cluster-node-timeout: how long a node may stay
	// silent before the others flag it failing (fail?), and, once most
	// masters did, failed (fail). Whole milliseconds, 1 ms or more; 0 is
	// DefaultNodeTimeout.
	NodeTimeout time.Duration
	// StartTimeout bounds each node's start (as Options.StartTimeout),
	// the redis-cli run that creates the cluster, and each wait for the
	// cluster to settle (Settle), which gets twice NodeTimeout more;
	// default DefaultStartTimeout.
	StartTimeout time.Duration
	// StopTimeout bounds each node's stop steps, Freeze and Resume, as
	// Options.StopTimeout; default DefaultStopTimeout.
	StopTimeout time.Duration
	// Dir is the parent of the nodes' working folders, node-0, node-1, …
	// (each holds its redis.conf, its logs and nodes.conf). It is created
	// when missing and kept. Empty: a temporary folder that Stop removes,
	// and that a failed StartCluster keeps for the logs its error names.
	Dir string
	// Proxied puts a Proxy in front of every node and makes the nodes
	// announce the proxies' ports (cluster-announce-port), so MOVED and
	// ASK redirects and CLUSTER SLOTS, SHARDS and NODES name the proxies,
	// and a client that follows the cluster only talks to the nodes
	// through them. The cluster bus stays direct.
	Proxied bool
	// Extra lists more directives for every node, written after the
	// cluster's own (a later directive wins), as Options.Extra; for
	// example {"cluster-allow-reads-when-down", "yes"}.
	Extra [][2]string
	// Logger receives the nodes' and the cluster's events, each node's
	// with a "node" attribute; nil: slog.Default().
	Logger *slog.Logger
}

// Cluster bounds and defaults.
const (
	// NumSlots is how many hash slots a Redis Cluster has.
	NumSlots = keyslot.Count
	// DefaultClusterNodes is the number of masters when
	// ClusterOptions.Nodes is 0.
	DefaultClusterNodes = 3
	// MinClusterNodes is the fewest masters redis-cli --cluster create
	// accepts.
	MinClusterNodes = 3
	// MaxClusterNodes bounds ClusterOptions.Nodes.
	MaxClusterNodes = 16
	// DefaultNodeTimeout is cluster-node-timeout when
	// ClusterOptions.NodeTimeout is 0: short, so a killed node is flagged
	// failed within about two seconds.
	DefaultNodeTimeout = time.Second
	// BusPortOffset is what a node's cluster bus port adds to its client
	// port.
	BusPortOffset = 10000
)

// withDefaults checks o and fills its zero fields.
func (o ClusterOptions) withDefaults() (ClusterOptions, error) {
	switch {
	case o.Nodes != 0 && (o.Nodes < MinClusterNodes || o.Nodes > MaxClusterNodes):
		return o, fmt.Errorf("%w: Nodes %d is not between %d and %d", ErrOptions, o.Nodes, MinClusterNodes, MaxClusterNodes)
	case o.NodeTimeout < 0 || (o.NodeTimeout > 0 && o.NodeTimeout < time.Millisecond):
		return o, fmt.Errorf("%w: NodeTimeout %v is not 0 or 1ms and more", ErrOptions, o.NodeTimeout)
	}
	// The fields a node shares with a Server are checked as a Server's.
	node, err := Options{
		MaxMemory: o.MaxMemory, Policy: o.Policy, StartTimeout: o.StartTimeout,
		StopTimeout: o.StopTimeout, Extra: o.Extra, Logger: o.Logger,
	}.withDefaults()
	if err != nil {
		return o, err
	}
	o.Policy, o.StartTimeout, o.StopTimeout, o.Logger = node.Policy, node.StartTimeout, node.StopTimeout, node.Logger
	if o.Nodes == 0 {
		o.Nodes = DefaultClusterNodes
	}
	if o.NodeTimeout == 0 {
		o.NodeTimeout = DefaultNodeTimeout
	}
	return o, nil
}

// settleBound bounds one wait for the cluster to settle: StartTimeout,
// plus the time the other nodes take to clear a restarted node's fail
// flag (twice the node timeout after they set it).
func (o ClusterOptions) settleBound() time.Duration { return o.StartTimeout + 2*o.NodeTimeout }

// nodeDir is node i's working folder under dir.
func nodeDir(dir string, i int) string { return filepath.Join(dir, "node-"+strconv.Itoa(i)) }

// nodeOptions are the Options of node i, listening on port in folder
// dir, announcing announcePort to clients (0: port itself).
//
// The cluster's directives:
//   - cluster-enabled yes, cluster-config-file nodes.conf (in dir, so a
//     Restart keeps the node's ID, epoch and slots);
//   - cluster-node-timeout (NodeTimeout);
//   - cluster-require-full-coverage no: the nodes keep serving their own
//     slots when another node is down;
//   - cluster-allow-reads-when-down no (Redis's default, written out): a
//     node that sees the cluster down (cluster_state:fail, as a restarted
//     node does for its first two seconds, or one cut off from most
//     masters) answers every command CLUSTERDOWN, reads too, rather than
//     serve reads it may not own any more;
//   - cluster-announce-ip 127.0.0.1, and when proxied
//     cluster-announce-port (the proxy's) and cluster-announce-bus-port
//     (port+BusPortOffset, the bus not being proxied).
func (o ClusterOptions) nodeOptions(i, port, announcePort int, dir string) Options {
	extra := [][2]string{
		{"cluster-enabled", "yes"},
		{"cluster-config-file", "nodes.conf"},
		{"cluster-node-timeout", strconv.FormatInt(max(o.NodeTimeout.Milliseconds(), 1), 10)},
		{"cluster-require-full-coverage", "no"},
		{"cluster-allow-reads-when-down", "no"},
		{"cluster-announce-ip", "127.0.0.1"},
	}
	if announcePort != 0 {
		extra = append(extra,
			[2]string{"cluster-announce-port", strconv.Itoa(announcePort)},
			[2]string{"cluster-announce-bus-port", strconv.Itoa(port + BusPortOffset)})
	}
	return Options{
		MaxMemory:    o.MaxMemory,
		Policy:       o.Policy,
		Port:         port,
		StartTimeout: o.StartTimeout,
		StopTimeout:  o.StopTimeout,
		Dir:          dir,
		Extra:        append(extra, o.Extra...),
		Logger:       o.Logger.With("node", i),
	}
}
