package redisconfig

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kvshare/kvshare/redisdrv/redistest"
	"github.com/kvshare/kvshare/tools/internal/runprefix"
)

// DefaultMaxMemory is the maxmemory of a server started with a zero
// Options.MaxMemory: a bound, so that a run that stores more than the
// machine holds is refused by the server (OOM, a Declined put) rather
// than killed by the kernel.
const DefaultMaxMemory = 2 << 30

// DefaultPolicy is the maxmemory-policy of a server started with an empty
// Options.Policy: a full server refuses puts and never evicts what a run
// stored.
const DefaultPolicy = "noeviction"

// Text is the store file a user would write for the server at addr
// (host:port): [blob] key_prefix keyPrefix, [redis] address, and, when
// maxMemory is positive or policy is set, the maxmemory and
// maxmemory_policy the doctor is to expect of it.
func Text(addr, keyPrefix string, maxMemory int64, policy string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[blob]\nkey_prefix = %q\n\n[redis]\naddress = %q\n", keyPrefix, addr)
	if maxMemory > 0 {
		fmt.Fprintf(&b, "maxmemory = %d\n", maxMemory)
	}
	if policy != "" {
		fmt.Fprintf(&b, "maxmemory_policy = %q\n", policy)
	}
	return b.String()
}

// Start starts a loopback redis-server from binary (a path, or a name
// looked up in PATH) with opts (MaxMemory 0 means [DefaultMaxMemory],
// Policy "" [DefaultPolicy]; Logger nil means logger), writes its store
// file into a temporary folder ([blob] key_prefix runprefix.DefaultBase:
// each job adds a prefix of its own run) and returns the file's path,
// the server, and stop, which stops the server and removes the folder.
// Anything it started is stopped again when it fails.
func Start(ctx context.Context, binary string, opts redistest.Options, logger *slog.Logger) (path string, s *redistest.Server, stop func() error, err error) {
	abs, err := absBinary(binary)
	if err != nil {
		return "", nil, nil, err
	}
	if opts.MaxMemory == 0 {
		opts.MaxMemory = DefaultMaxMemory
	}
	if opts.Policy == "" {
		opts.Policy = DefaultPolicy
	}
	if opts.Logger == nil {
		opts.Logger = logger
	}
	s, err = redistest.Start(ctx, abs, opts)
	if err != nil {
		return "", nil, nil, fmt.Errorf("starting redis-server %s: %w", abs, err)
	}
	tmp, err := os.MkdirTemp("", "kvshare-redis-store-")
	if err != nil {
		return "", nil, nil, errors.Join(err, s.Stop())
	}
	stop = func() error { return errors.Join(s.Stop(), os.RemoveAll(tmp)) }
	path = filepath.Join(tmp, "redis.toml")
	text := Text(s.Addr(), runprefix.DefaultBase, opts.MaxMemory, opts.Policy)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return "", nil, nil, errors.Join(err, stop())
	}
	return path, s, stop, nil
}

// absBinary is binary as an absolute path: made absolute when it names a
// path, looked up in PATH when it is a bare name.
func absBinary(binary string) (string, error) {
	switch {
	case binary == "":
		return "", errors.New("no redis-server binary given")
	case filepath.IsAbs(binary):
		return binary, nil
	case !strings.ContainsRune(binary, filepath.Separator):
		found, err := exec.LookPath(binary)
		if err != nil {
			return "", fmt.Errorf("redis-server binary %q: %w (give its path, for example /usr/bin/redis-server)", binary, err)
		}
		binary = found
	}
	abs, err := filepath.Abs(binary)
	if err != nil {
		return "", fmt.Errorf("redis-server binary %q: %w", binary, err)
	}
	return abs, nil
}
