package tier

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
// with tests, and those of tools.
var RedisPackages = [][2]string{{"redisdrv", "./..."}, {"tools", "./..."}}

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
// it.
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
		timeout = "20m"
	}
	bins, err := os.MkdirTemp("", "kvshare-redis-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bins)
	wrap, where := PrivateNetwork()
	fmt.Fprintln(w, "redis: running", where)
	env, err := toolchainFirst()
	if err != nil {
		return err
	}
	env = append(env, EnvRedisServer+"="+binary)
	t := Tier{Name: "redis", Off: redisOff, Packages: RedisPackages, Timeout: timeout, Wrap: wrap, Env: env}
	var failed []string
	if _, err := t.Run(root, list, bins, w); err != nil {
		failed = append(failed, err.Error())
	}
	// The short soak over a server of its own, where the tests ran.
	kvshare := filepath.Join(bins, "kvshare")
	build := exec.Command("go", "build", "-o", kvshare, "./cmd/kvshare")
	build.Dir, build.Stdout, build.Stderr = filepath.Join(root, "tools"), w, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("redis: building kvshare: %w", err)
	}
	args := append(append([]string(nil), wrap...), kvshare, "soak", "-short", "--redis-server", binary)
	fmt.Fprintln(w, "redis: kvshare soak -short over a loopback redis-server")
	soak := exec.Command(args[0], args[1:]...)
	soak.Env, soak.Stdout, soak.Stderr = env, w, os.Stderr
	if err := soak.Run(); err != nil {
		fmt.Fprintf(w, "redis: FAIL kvshare soak over the server: %v\n", err)
		failed = append(failed, "kvshare soak over the server")
	}
	if len(failed) > 0 {
		return fmt.Errorf("redis: failed: %s", strings.Join(failed, "; "))
	}
	return nil
}
