package redistest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// EnvServer is the variable that turns the redis tier on: the absolute
// path of a redis-server binary.
const EnvServer = "KVSHARE_REDIS_SERVER"

// TierOff is the one line a redis-tier test skips with when the tier is
// off. It starts with "redis tier off", which the redis mage target treats
// as a failure: when the variable is set, nothing may skip.
const TierOff = "redis tier off: " + EnvServer + " is not set (set it to the absolute path of a redis-server binary to run this test)"

// MinMajor is the lowest redis-server major version Check accepts.
const MinMajor = 7

// versionTimeout bounds `redis-server --version`.
const versionTimeout = 10 * time.Second

// versionField finds the version in what `redis-server --version` prints:
// "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 …".
var versionField = regexp.MustCompile(`\bv=(\d+)\.(\d+)\.(\d+)\b`)

// Tier reads EnvServer. Unset or empty: the tier is off (on false, err
// nil). Set: the tier is on, binary is the variable's value, and err says
// why it cannot be used (see Check).
func Tier() (binary string, on bool, err error) {
	binary = os.Getenv(EnvServer)
	if binary == "" {
		return "", false, nil
	}
	_, err = Check(context.Background(), binary)
	return binary, true, err
}

// Check reports whether binary is a usable redis-server: an absolute path
// (ErrNotAbsolute) to an existing file (ErrNoBinary) with execute
// permission (ErrNotExecutable) whose `--version` succeeds and prints a
// version of major MinMajor or above (ErrVersion). It returns that
// version, for example "7.0.15".
func Check(ctx context.Context, binary string) (version string, err error) {
	if !filepath.IsAbs(binary) {
		return "", fmt.Errorf("%w: %q (give the full path, for example /usr/bin/redis-server)", ErrNotAbsolute, binary)
	}
	info, err := os.Stat(binary)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%w: %s does not exist", ErrNoBinary, binary)
	case err != nil:
		return "", fmt.Errorf("%w: %s: %v", ErrNoBinary, binary, err)
	case info.IsDir():
		return "", fmt.Errorf("%w: %s is a folder", ErrNoBinary, binary)
	case info.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("%w: %s has mode %v", ErrNotExecutable, binary, info.Mode().Perm())
	}
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary, "--version").CombinedOutput()
	text := strings.TrimSpace(string(out))
	if err != nil {
		if cerr := context.Cause(ctx); cerr != nil {
			return "", fmt.Errorf("%w: %s --version: %w", ErrVersion, binary, cerr)
		}
		return "", fmt.Errorf("%w: %s --version: %v: %q", ErrVersion, binary, err, text)
	}
	return parseVersion(binary, text)
}

// parseVersion reads the version out of `--version` output text.
func parseVersion(binary, text string) (string, error) {
	m := versionField.FindStringSubmatch(text)
	if m == nil {
		return "", fmt.Errorf("%w: %s --version printed no \"v=X.Y.Z\": %q", ErrVersion, binary, text)
	}
	major, err := strconv.Atoi(m[1])
	if err != nil || major < MinMajor {
		return "", fmt.Errorf("%w: %s is version %s.%s.%s; %d.0 or newer is needed", ErrVersion, binary, m[1], m[2], m[3], MinMajor)
	}
	return m[1] + "." + m[2] + "." + m[3], nil
}

// Require returns the tier's redis-server binary for a test. Off: t skips
// with TierOff. On but unusable: t fails, saying why.
func Require(t testing.TB) string {
	t.Helper()
	binary, on, err := Tier()
	if !on {
		t.Skip(TierOff)
	}
	if err != nil {
		t.Fatalf("redis tier on (%s=%q) but unusable: %v", EnvServer, binary, err)
	}
	return binary
}
