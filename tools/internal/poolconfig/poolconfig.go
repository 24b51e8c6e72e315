// Package poolconfig writes the store config a user would write for a
// loopback pool started with package pool of mooncakedrv: for the
// real-pool tests of the tools module (through realpool) and for kvshare
// bench's own pool.
package poolconfig

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvshare/kvshare/mooncakedrv/pool"
)

// LocalBufferSize is the client's local buffer in the config written.
const LocalBufferSize = 64 << 20

// Text is the text of the store config a user would write for pool
// p, started from the Mooncake folder dir: [blob] key_prefix keyPrefix,
// [mooncake] library dir/lib/…, sdk_sha256 its hash, the pool's master
// and metadata server, protocol tcp, local hostname 127.0.0.1, global
// segment 0 (the client mounts nothing: every byte crosses TCP to the
// pool's segment provider), a LocalBufferSize local buffer. The client
// process also needs p.ClientEnv() in its environment.
func Text(dir string, p *pool.Pool, keyPrefix string, edits ...Edit) (string, error) {
	sum, err := pool.LibrarySHA256(dir)
	if err != nil {
		return "", fmt.Errorf("hashing the library: %w", err)
	}
	return fmt.Sprintf(`[blob]
key_prefix = %q

[mooncake]
library = %q
sdk_sha256 = [%q]
master = %q
metadata_server = %q
protocol = "tcp"
local_hostname = "127.0.0.1"
global_segment_size = 0
local_buffer_size = %d
`, keyPrefix, filepath.Join(dir, pool.Library), sum, p.MasterAddress(), p.MetadataURL(), LocalBufferSize) + extra(edits), nil
}

// Edit adds lines to the [mooncake] section Text writes.
type Edit func() string

// Replicas asks every put for n copies (nothing for n below 2).
func Replicas(n int) Edit {
	return func() string {
		if n < 2 {
			return ""
		}
		return fmt.Sprintf("replicas = %d\n", n)
	}
}

// extra joins the edits' lines.
func extra(edits []Edit) string {
	var b strings.Builder
	for _, e := range edits {
		b.WriteString(e())
	}
	return b.String()
}

// Start starts a loopback pool from the Mooncake folder dir (made
// absolute) with opts (Dir is set from dir; a zero opts takes pool's
// defaults), writes its store config into a temporary folder, sets the
// client environment the pool asks for in this process, and returns the
// config's path, the pool, and stop, which stops the pool and removes
// the folder. Anything it started is stopped again when it fails.
func Start(ctx context.Context, dir string, opts pool.Options, logger *slog.Logger, edits ...Edit) (path string, p *pool.Pool, stop func() error, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, nil, err
	}
	opts.Dir = abs
	if opts.Logger == nil {
		opts.Logger = logger
	}
	p, err = pool.Start(ctx, opts)
	if err != nil {
		return "", nil, nil, fmt.Errorf("starting a pool from %s: %w", abs, err)
	}
	tmp, err := os.MkdirTemp("", "kvshare-pool-")
	if err != nil {
		return "", nil, nil, errors.Join(err, p.Stop())
	}
	stop = func() error { return errors.Join(p.Stop(), os.RemoveAll(tmp)) }
	text, err := Text(abs, p, "kvshare", edits...)
	if err != nil {
		return "", nil, nil, errors.Join(err, stop())
	}
	path = filepath.Join(tmp, "store.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return "", nil, nil, errors.Join(err, stop())
	}
	for _, kv := range p.ClientEnv() {
		name, value, _ := strings.Cut(kv, "=")
		if err := os.Setenv(name, value); err != nil {
			return "", nil, nil, errors.Join(err, stop())
		}
	}
	return path, p, stop, nil
}
