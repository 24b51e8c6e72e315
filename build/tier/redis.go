package tier

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/kvshare/kvshare/build/modules"
	"github.com/kvshare/kvshare/redisdrv/redistest"
)

// The variables [Redis] reads.
const (
	// EnvRedisServer names a redis-server binary by its absolute path;
	// unset, the tier is off.
	EnvRedisServer = redistest.EnvServer
	// EnvRedisTimeout is each binary's -test.timeout (default 20m).
	EnvRedisTimeout = "KVSHARE_REDIS_TIMEOUT"
)

// RedisPackages are the Redis tier's packages: every package of redisdrv
// with tests, and those of tools, node and events.
var RedisPackages = [][2]string{{"redisdrv", "./..."}, {"tools", "./..."}, {"node", "./..."}, {"events", "./..."}}

// redisOff is what a Redis test logs when it skips because the tier is
// not asked for: the start of redistest.TierOff.
const redisOff = "redis tier off"

// versionTimeout bounds checking the binary (its --version).
const versionTimeout = 30 * time.Second

// Redis runs the Redis tier from the repository at root: off (one line,
// success) when KVSHARE_REDIS_SERVER is unset (getenv); else the binary
// is checked as redistest.Check does (an absolute path to an executable
// file whose --version names Redis 7 or newer; the version printed),
// every test binary runs, then a short soak over a server started from
// it and another over a three-node cluster started from it.
func Redis(root string, list modules.List, getenv func(string) string, w io.Writer) error {
	binary := getenv(EnvRedisServer)
	if binary == "" {
		fmt.Fprintf(w, "redis: off (%s is not set; set it to the absolute path of a redis-server binary to run the Redis tier)\n", EnvRedisServer)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), versionTimeout)
	defer cancel()
	version, err := redistest.Check(ctx, binary)
	if err != nil {
		return fmt.Errorf("redis: %s=%q cannot be used: %w", EnvRedisServer, binary, err)
	}
	fmt.Fprintf(w, "redis: %s, redis-server %s\n", binary, version)
	timeout := getenv(EnvRedisTimeout)
	if timeout == "" {
		var err error
		if timeout, err = defaultTimeout(); err != nil {
			return fmt.Errorf("%s: %w", "redis", err)
		}
	}
	return redisTier(binary, timeout).run(root, list, w)
}

// redisTier is the Redis tier over binary: every test binary of
// RedisPackages with KVSHARE_REDIS_SERVER set, then a short soak over a
// loopback server started from binary, then one over a loopback
// three-node cluster (--redis-cluster).
func redisTier(binary, timeout string) storeTier {
	return storeTier{name: "redis", off: redisOff, timeout: timeout, packages: RedisPackages,
		env: []string{EnvRedisServer + "=" + binary},
		soaks: []storeSoak{
			{flags: []string{"--redis-server", binary}, store: "a loopback redis-server"},
			{flags: []string{"--redis-server", binary, "--redis-cluster"}, store: "a loopback three-node Redis Cluster"},
		}}
}
