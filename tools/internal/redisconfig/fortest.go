package redisconfig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kvshare/kvshare/redisdrv/redistest"
)

// TestKeyPrefix is the [blob] key_prefix of the store files ForTest
// writes.
const TestKeyPrefix = "kvshare-test"

// ForTest starts a server for t (redistest.StartForTest: t skips with
// redistest.TierOff when the Redis tier is off, fails when the tier's
// binary is unusable, and the server stops when t ends) and writes its
// store file into t's temporary folder: [blob] key_prefix TestKeyPrefix,
// [redis] address and the server's maxmemory and policy as the doctor's
// expectations. A zero o.MaxMemory means DefaultMaxMemory.
func ForTest(t testing.TB, o redistest.Options) (path string, s *redistest.Server) {
	t.Helper()
	if o.MaxMemory == 0 {
		o.MaxMemory = DefaultMaxMemory
	}
	if o.Policy == "" {
		o.Policy = DefaultPolicy
	}
	s = redistest.StartForTest(t, o)
	path = filepath.Join(t.TempDir(), "redis.toml")
	if err := os.WriteFile(path, []byte(Text(s.Addr(), TestKeyPrefix, o.MaxMemory, o.Policy)), 0o644); err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
	return path, s
}

// ClusterForTest starts a cluster for t (redistest.ClusterForTest: t
// skips with redistest.TierOff when the Redis tier is off, fails when
// the tier's binary is unusable or no redis-cli lies beside it, and the
// nodes stop when t ends) and writes its store file into t's temporary
// folder: [blob] key_prefix TestKeyPrefix, [redis] cluster = true, every
// node a seed, and the nodes' maxmemory and policy as the doctor's
// expectations. A zero o.MaxMemory means DefaultMaxMemory.
func ClusterForTest(t testing.TB, o redistest.ClusterOptions) (path string, c *redistest.Cluster) {
	t.Helper()
	o = clusterDefaults(o)
	c = redistest.ClusterForTest(t, o)
	path = filepath.Join(t.TempDir(), "cluster.toml")
	if err := os.WriteFile(path, []byte(ClusterText(c.Addrs(), TestKeyPrefix, o.MaxMemory, o.Policy)), 0o644); err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
	return path, c
}
