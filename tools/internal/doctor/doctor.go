package doctor

import (
	"context"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/kvshare/kvshare/tools/internal/storefile"
)

// The checks of a Mooncake store file, by the name each prints, in the
// order they run. A Redis store file has checks of its own (CheckPassword
// to CheckPersistence, CheckLookup; a cluster's CheckSlotMap, CheckNodes
// and CheckClusterState too), the config, key prefix, probe and close
// checks named as here.
const (
	CheckConfig      = "config"
	CheckKeyPrefix   = "key prefix"
	CheckLibrary     = "library"
	CheckEnvironment = "environment"
	CheckMaster      = "master"
	CheckMetadata    = "metadata"
	CheckClient      = "client"
	CheckListeners   = "listeners"
	CheckPut         = "probe put"
	CheckGet         = "probe get"
	CheckRemove      = "probe remove"
	CheckClose       = "client close"
)

// checks lists every check in order, for the line of those skipped.
var checks = [...]string{CheckConfig, CheckKeyPrefix, CheckLibrary, CheckEnvironment, CheckMaster,
	CheckMetadata, CheckClient, CheckListeners, CheckPut, CheckGet, CheckRemove, CheckClose}

// Defaults of [Options].
const (
	DefaultWait       = 10 * time.Second
	DefaultProbeBytes = 4096
)

// Options says what the doctor checks and how long it waits.
type Options struct {
	// ConfigPath is the store config file (store.toml).
	ConfigPath string
	// LookupEnv reads the environment; nil means os.LookupEnv. The
	// client itself (mooncakesdk.Open) always reads the process's own.
	LookupEnv func(string) (string, bool)
	// Wait bounds each network wait: the master's dial, the metadata
	// server's answer, the client's setup (default [DefaultWait]). The
	// probe's own calls cannot be bounded: the C ABI takes no deadline.
	Wait time.Duration
	// ProbeBytes is the probe object's size (default [DefaultProbeBytes]).
	ProbeBytes int
	// Logger receives the Mooncake SDK's records (library loaded, client
	// set up); nil discards them. The library's own log (glog) goes to
	// stderr whatever this says.
	Logger *slog.Logger

	// listeners lists this process's listening sockets; nil means
	// procListeners. Tests replace it.
	listeners func() ([]listener, error)
}

func (o Options) withDefaults() Options {
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	if o.ProbeBytes <= 0 {
		o.ProbeBytes = DefaultProbeBytes
	}
	if o.listeners == nil {
		o.listeners = procListeners
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// Run checks the store config at opts.ConfigPath and the pool it names,
// one check at a time, and reports every one (the package documentation
// says what each needs; the tools module's README.md what each looks
// at). It never panics on a bad pool and returns once every check ran or
// was skipped.
func Run(ctx context.Context, opts Options) Report {
	opts = opts.withDefaults()
	kind, err := storefile.Read(opts.ConfigPath)
	if err != nil {
		// Which checks would follow depends on the store: none is named.
		return Report{File: opts.ConfigPath, Findings: []Finding{fail(CheckConfig, "%v", err)}}
	}
	switch kind {
	case storefile.Redis:
		return runRedis(ctx, opts)
	case storefile.Memory:
		return runMemory(opts)
	case storefile.Disk:
		return runDisk(opts)
	}
	r := &run{Report: Report{File: opts.ConfigPath}, all: checks[:]}

	cfg, f := checkConfig(opts.ConfigPath)
	if !r.add(f) {
		r.skipRest("the config was refused")
		return r.Report
	}
	prefix, f := checkKeyPrefix(cfg.File, cfg.Blob)
	r.add(f)
	r.add(checkLibrary(cfg, opts.LookupEnv))
	r.add(checkEnvironment(opts.LookupEnv))
	master := len(r.Findings)
	r.add(dialMaster(ctx, cfg.Mooncake.Master, opts.Wait))
	r.add(checkMetadata(ctx, cfg.Mooncake.MetadataServer, opts.Wait))
	if r.failed() {
		r.skipRest("a check above failed")
		return r.Report
	}

	before, _ := opts.listeners() // an error shows in checkListeners
	client, f, err := openClient(ctx, cfg, opts.Wait, opts.Logger)
	r.Findings[master] = masterAnswer(cfg.Mooncake.Master, err)
	if !r.add(f) {
		r.skipRest("the client did not set up")
		return r.Report
	}
	r.add(checkListeners(ctx, opts.listeners, inodes(before), cfg.Mooncake.LocalHostname, opts.Wait))
	key, err := probeKey(prefix)
	if err != nil { // checkKeyPrefix passed, so this cannot happen
		r.add(fail(CheckPut, "%v", err))
		r.skipRest("no probe key")
		return r.Report
	}
	for _, f := range probe(client, key, opts.ProbeBytes) {
		r.add(f)
	}
	return r.Report
}

// run is a Report being written, and every check its store has, in
// order.
type run struct {
	Report
	all []string
}

// add appends f and reports whether it did not fail.
func (r *run) add(f Finding) bool {
	r.Findings = append(r.Findings, f)
	return f.Verdict != Fail
}

func (r *run) failed() bool { return r.Report.Failed() }

// skipRest adds one CheckRest line for every check not reported yet (a
// Skip line of its own when only one is left).
func (r *run) skipRest(why string) {
	var left []string
	for _, c := range r.all {
		if _, done := r.Find(c); !done {
			left = append(left, c)
		}
	}
	switch len(left) {
	case 0:
	case 1:
		r.add(skip(left[0], "not run: %s", why))
	default:
		r.add(rest(left, why))
	}
}
