package redisconfig

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvshare/kvshare/redisdrv/redistest"
	"github.com/kvshare/kvshare/tools/internal/runprefix"
)

// ClusterText is the store file a user would write for the Redis
// Cluster whose seeds are given (host:port each): [blob] key_prefix
// keyPrefix, [redis] cluster = true and addresses, and, when maxMemory
// is positive or policy is set, the maxmemory and maxmemory_policy the
// doctor is to expect of every node.
func ClusterText(seeds []string, keyPrefix string, maxMemory int64, policy string) string {
	quoted := make([]string, len(seeds))
	for i, s := range seeds {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[blob]\nkey_prefix = %q\n\n[redis]\ncluster = true\naddresses = [%s]\n", keyPrefix, strings.Join(quoted, ", "))
	if maxMemory > 0 {
		fmt.Fprintf(&b, "maxmemory = %d\n", maxMemory)
	}
	if policy != "" {
		fmt.Fprintf(&b, "maxmemory_policy = %q\n", policy)
	}
	return b.String()
}

// StartCluster starts a loopback Redis Cluster from binary (a path, or a
// name looked up in PATH; redis-cli must lie beside it) with o (Nodes 0
// means three; MaxMemory 0 means [DefaultMaxMemory] on every node,
// Policy "" [DefaultPolicy]; Logger nil means logger), writes its store
// file into a temporary folder ([blob] key_prefix runprefix.DefaultBase,
// every node's address a seed) and returns the file's path, the
// cluster, and stop, which stops every node and removes the folder.
// Anything it started is stopped again when it fails.
func StartCluster(ctx context.Context, binary string, o redistest.ClusterOptions, logger *slog.Logger) (path string, c *redistest.Cluster, stop func() error, err error) {
	abs, err := absBinary(binary)
	if err != nil {
		return "", nil, nil, err
	}
	o = clusterDefaults(o)
	if o.Logger == nil {
		o.Logger = logger
	}
	c, err = redistest.StartCluster(ctx, abs, o)
	if err != nil {
		return "", nil, nil, fmt.Errorf("starting a Redis Cluster from %s: %w", abs, err)
	}
	tmp, err := os.MkdirTemp("", "kvshare-redis-cluster-store-")
	if err != nil {
		return "", nil, nil, errors.Join(err, c.Stop())
	}
	stop = func() error { return errors.Join(c.Stop(), os.RemoveAll(tmp)) }
	path = filepath.Join(tmp, "cluster.toml")
	text := ClusterText(c.Addrs(), runprefix.DefaultBase, o.MaxMemory, o.Policy)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return "", nil, nil, errors.Join(err, stop())
	}
	return path, c, stop, nil
}

// clusterDefaults fills the memory limit and policy of every node.
func clusterDefaults(o redistest.ClusterOptions) redistest.ClusterOptions {
	if o.MaxMemory == 0 {
		o.MaxMemory = DefaultMaxMemory
	}
	if o.Policy == "" {
		o.Policy = DefaultPolicy
	}
	return o
}
