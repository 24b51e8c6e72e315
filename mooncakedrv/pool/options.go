package pool

import (
	"fmt"
	"log/slog"
	"time"
)

// Options says how to start a pool. The zero value of every field but Dir
// is usable: eviction off, Mooncake's own put and TTL timeouts, a 512 MiB
// provider segment, logs in a temporary folder the pool removes on Stop.
type Options struct {
	// Dir is the Mooncake folder: bin/mooncake_master, bin/mooncake_client,
	// lib/libmooncake_store.so. It must be an absolute path.
	Dir string

	// Providers is the number of segment providers, each on a port of
	// its own (default 1, at most MaxProviders).
	Providers int
	// Isolate runs each provider in a network namespace of its own,
	// joined to the master and the clients by a bridge in the caller's
	// namespace (10.88.N.0/24), so that a provider can be cut off
	// (CutProvider) as well as killed or frozen. It needs root and ip and
	// nsenter; where they are missing the providers run on loopback and
	// the pool says so in one line. The bridge is made in the caller's
	// namespace: run isolated pools only inside a namespace of your own
	// (the real-pool tier's).
	Isolate bool
	// SegmentSize is each provider's global segment in bytes: the pool's
	// capacity is Providers times it (default 512 MiB).
	SegmentSize int64
	// LocalBufferSize is the provider's local buffer in bytes (default
	// 16 MiB).
	LocalBufferSize int64

	// Eviction turns the master's eviction on with its own defaults. Off
	// (the zero value) passes --eviction_ratio=0
	// --eviction_high_watermark_ratio=1.0, so a full pool answers "pool
	// full" instead of dropping objects.
	Eviction bool
	// PutDiscardTimeout is --put_start_discard_timeout_sec: how long an
	// unfinished put holds its key. Whole seconds; zero keeps Mooncake's
	// default (30 s). Tests use 2 s.
	PutDiscardTimeout time.Duration
	// PutReleaseTimeout is --put_start_release_timeout_sec: how long an
	// unfinished put holds its space. Whole seconds, at least
	// PutDiscardTimeout; zero keeps Mooncake's default (600 s). Tests use
	// 4 s.
	PutReleaseTimeout time.Duration
	// ClientTTL is --client_ttl: how long the master keeps a silent client
	// (a frozen provider) before dropping its segment. Whole seconds; zero
	// keeps Mooncake's default (10 s).
	ClientTTL time.Duration
	// MasterFlags and ProviderFlags are appended to the processes' command
	// lines ("--name=value" each), after the pool's own.
	MasterFlags, ProviderFlags []string
	// MasterEnv and ProviderEnv ("NAME=value" each) are added to the
	// processes' environment, after the pool's own (MC_TCP_BIND_ADDRESS).
	MasterEnv, ProviderEnv []string

	// LogDir receives each process's output, one file per start
	// (master-1.log, provider-2.log, …). Empty: a temporary folder that the
	// pool removes on a clean Stop and keeps when Start fails.
	LogDir string
	// Logger receives the pool's own events; nil: slog.Default().
	Logger *slog.Logger

	// StartTimeout bounds the wait for one process's sockets (default 30 s;
	// the master needs about 1.2 s).
	StartTimeout time.Duration
	// StopTimeout bounds each stop step: SIGTERM, then SIGKILL after this
	// long, then the wait for the exit (default 10 s).
	StopTimeout time.Duration
	// Attempts is how many times a process is launched, on fresh ports
	// where it may, before Start gives up on early exits (default 3).
	Attempts int

	// beforeLaunch, when set, runs after the ports of a launch are picked
	// and before the process starts: tests take a port there to provoke a
	// bind failure.
	beforeLaunch func(role Role, attempt int, ports []int)
}

// MaxProviders bounds Options.Providers.
const MaxProviders = 16

// Test defaults, the master settings of the real-pool tier
// (docs/design/mooncakedrv.md, section "The pool and the real-pool
// tier"): short put timeouts so an overtaken put shows in seconds.
const (
	TestPutDiscardTimeout = 2 * time.Second
	TestPutReleaseTimeout = 4 * time.Second
)

// ForTests returns Options for a test pool on dir: eviction off, put
// discard/release timeouts of 2 s / 4 s.
func ForTests(dir string) Options {
	return Options{
		Dir:               dir,
		PutDiscardTimeout: TestPutDiscardTimeout,
		PutReleaseTimeout: TestPutReleaseTimeout,
	}
}

// withDefaults fills the zero fields and checks the rest.
func (o Options) withDefaults() (Options, error) {
	// Checked before the defaults fill the zeros in: 0 asks for the
	// default, below 0 is refused.
	switch {
	case o.SegmentSize < 0 || o.LocalBufferSize < 0:
		return o, fmt.Errorf("%w: negative SegmentSize or LocalBufferSize", ErrOptions)
	case o.StartTimeout < 0 || o.StopTimeout < 0 || o.Attempts < 0:
		return o, fmt.Errorf("%w: negative StartTimeout, StopTimeout or Attempts", ErrOptions)
	case o.Providers < 0 || o.Providers > MaxProviders:
		return o, fmt.Errorf("%w: Providers is %d, want 0 (one) to %d", ErrOptions, o.Providers, MaxProviders)
	case o.PutReleaseTimeout != 0 && o.PutReleaseTimeout < o.PutDiscardTimeout:
		return o, fmt.Errorf("%w: PutReleaseTimeout %v below PutDiscardTimeout %v", ErrOptions, o.PutReleaseTimeout, o.PutDiscardTimeout)
	}
	if o.Providers == 0 {
		o.Providers = 1
	}
	if o.SegmentSize == 0 {
		o.SegmentSize = 512 << 20
	}
	if o.LocalBufferSize == 0 {
		o.LocalBufferSize = 16 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 30 * time.Second
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = 10 * time.Second
	}
	if o.Attempts == 0 {
		o.Attempts = 3
	}
	for name, d := range map[string]time.Duration{
		"PutDiscardTimeout": o.PutDiscardTimeout,
		"PutReleaseTimeout": o.PutReleaseTimeout,
		"ClientTTL":         o.ClientTTL,
	} {
		if d < 0 || d%time.Second != 0 {
			return o, fmt.Errorf("%w: %s %v is not a whole number of seconds", ErrOptions, name, d)
		}
	}
	return o, nil
}

// masterArgs is the master's command line on the given ports.
func (o Options) masterArgs(host string, rpc, metadata, metrics int) []string {
	args := []string{
		"--rpc_address=" + host,
		fmt.Sprintf("--rpc_port=%d", rpc),
		"--enable_http_metadata_server=true",
		"--http_metadata_server_host=" + host,
		fmt.Sprintf("--http_metadata_server_port=%d", metadata),
		"--metrics_host=" + host,
		fmt.Sprintf("--metrics_port=%d", metrics),
		"--logtostderr=true",
	}
	if !o.Eviction {
		args = append(args, "--eviction_ratio=0", "--eviction_high_watermark_ratio=1.0")
	}
	if o.PutDiscardTimeout > 0 {
		args = append(args, fmt.Sprintf("--put_start_discard_timeout_sec=%d", int64(o.PutDiscardTimeout/time.Second)))
	}
	if o.PutReleaseTimeout > 0 {
		args = append(args, fmt.Sprintf("--put_start_release_timeout_sec=%d", int64(o.PutReleaseTimeout/time.Second)))
	}
	if o.ClientTTL > 0 {
		args = append(args, fmt.Sprintf("--client_ttl=%d", int64(o.ClientTTL/time.Second)))
	}
	return append(args, o.MasterFlags...)
}

// providerArgs is the segment provider's command line.
func (o Options) providerArgs(host string, port int, masterAddr, metadataURL string) []string {
	args := []string{
		"--host=" + host,
		fmt.Sprintf("--port=%d", port),
		"--metadata_server=" + metadataURL,
		"--master_server_address=" + masterAddr,
		"--protocol=tcp",
		fmt.Sprintf("--global_segment_size=%d", o.SegmentSize),
		fmt.Sprintf("--local_buffer_size=%d", o.LocalBufferSize),
		"--logtostderr=true",
	}
	return append(args, o.ProviderFlags...)
}
