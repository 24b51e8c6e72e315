package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/kvshare/kvshare/tools/internal/bench"
	"github.com/kvshare/kvshare/tools/internal/storefile"
)

// benchCmd runs kvshare bench: the measurements, a table (or --json) on
// stdout, a progress bar on stderr when it is a terminal, the plots with
// --plot. Exit status 1 when a measurement could not run to the end; a
// missed goal is a finding, not a failure.
func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kvshare bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON (no table, no progress bar)")
	plotPath := fs.String("plot", "", "draw the figures into this file (.svg or .png); several files, comma-separated")
	store := fs.String("store", "", "store file (TOML) of a running Mooncake pool (measurement 5, and 6's real-pool case), Redis server or Redis Cluster (measurement 7), or the disk tier's directory (measurement 9; without one it runs in a temporary directory)")
	mooncakeDir := fs.String("mooncake-dir", "", "Mooncake folder (bin/, lib/): start a loopback pool from it for measurement 5 (and another for 6's real-pool case)")
	providers := fs.Int("providers", 0, "with --mooncake-dir: segment providers of the pool started (0: one)")
	replicas := fs.Int("replicas", 0, "with --mooncake-dir: copies every put of the pool started asks for (0: one)")
	redisServer := fs.String("redis-server", "", "redis-server binary (a path, or a name in PATH): start a loopback Redis server from it for measurement 7, and a three-node Redis Cluster beside it (redis-cli beside the binary)")
	redisCluster := fs.Bool("redis-cluster", false, "with --redis-server: start a loopback three-node Redis Cluster instead, and measure 7 over it alone")
	short := fs.Bool("short", false, "quick settings: fewer repetitions and samples (the mage bench target)")
	reps := fs.Int("reps", 0, fmt.Sprintf("repetitions of every measurement (0: %d, or %d with --short)", bench.Defaults().Reps, bench.Short().Reps))
	only := fs.String("only", "", "comma-separated measurements to run (1 settle, 2 engine loop, 3 row cpu, 4 bandwidth, 5 real pool, 6 lookup, 7 redis, 8 node, 9 disk); empty: all")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof -top FILE)")
	tracePath := fs.String("trace", "", "write an execution trace of the whole run to this file; go tool trace -pprof=sched FILE shows where goroutines waited for a core after being woken, -pprof=net where they waited on sockets")
	memProfile := fs.String("memprofile", "", "write a profile of every allocation of the run to this file at the end (go tool pprof -sample_index=alloc_space -top FILE); slows allocation")
	timeout := fs.Duration("timeout", 20*time.Minute, "limit for the whole run")
	metricsAddr := fs.String("metrics", "", "serve the measured lenders' metrics in Prometheus text format at http://ADDR/metrics while the benchmark runs (ADDR host:port, e.g. 127.0.0.1:9464)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kvshare bench: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	o := bench.Defaults()
	if *short {
		o = bench.Short()
	}
	if *reps != 0 {
		o.Reps = *reps
	}
	if line := clusterRefused(*redisCluster, *redisServer, *store); line != "" {
		fmt.Fprintln(stderr, "kvshare bench:", line)
		return 2
	}
	o.Redis.Cluster = *redisCluster
	o.Pool.Providers, o.Pool.Replicas = *providers, *replicas
	if err := benchStores(&o, *store, *mooncakeDir, *redisServer); err != nil {
		fmt.Fprintln(stderr, "kvshare bench:", err)
		return 2
	}
	var err error
	if o.Only, err = parseOnly(*only); err != nil {
		fmt.Fprintln(stderr, "kvshare bench:", err)
		return 2
	}
	if err := o.Validate(); err != nil {
		fmt.Fprintln(stderr, "kvshare", err)
		return 2
	}
	var plots []string
	if *plotPath != "" {
		plots = strings.Split(*plotPath, ",")
	}
	for _, p := range plots {
		if !strings.HasSuffix(p, ".svg") && !strings.HasSuffix(p, ".png") {
			fmt.Fprintf(stderr, "kvshare bench: --plot %s: %v\n", p, bench.ErrPlotFormat)
			return 2
		}
	}
	if len(plots) > 0 && !bench.Plottable(o) {
		fmt.Fprintln(stderr, "kvshare bench: --plot: nothing to plot: it draws measurements 1, 2, 4 and 5 (with a pool)")
		return 2
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, "kvshare bench:", err)
			return 2
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(stderr, "kvshare bench:", err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}
	if *tracePath != "" {
		f, err := os.Create(*tracePath)
		if err != nil {
			fmt.Fprintln(stderr, "kvshare bench:", err)
			return 2
		}
		defer f.Close()
		if err := trace.Start(f); err != nil {
			fmt.Fprintln(stderr, "kvshare bench:", err)
			return 2
		}
		defer trace.Stop()
	}
	if *memProfile != "" {
		runtime.MemProfileRate = 1 // every allocation: the per-row ones are small
		defer func() {
			if err := writeAllocs(*memProfile); err != nil {
				fmt.Fprintln(stderr, "kvshare bench: memprofile:", err)
			}
		}()
	}
	if *metricsAddr != "" {
		// The notice goes to stderr: stdout may be JSON.
		endpoint, err := serveMetrics(*metricsAddr, stderr, stderr)
		if err != nil {
			fmt.Fprintln(stderr, "kvshare bench: --metrics:", err)
			return 2
		}
		defer endpoint.close()
		o.Observe = endpoint.Observer(endpoint.warn)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	var progress bench.Progress
	if !*asJSON && isTerminal(stderr) {
		progress = progressBar(stderr)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rep, runErr := bench.Run(ctx, o, progress, logger)
	if rep != nil {
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(rep); err != nil {
				fmt.Fprintln(stderr, "kvshare bench:", err)
				return 1
			}
		} else {
			bench.WriteTable(stdout, rep)
			fmt.Fprintln(stdout, bench.Summary(rep))
		}
		for _, p := range plots {
			if err := bench.WritePlot(p, rep); err != nil {
				fmt.Fprintln(stderr, "kvshare bench: plot:", err)
				return 1
			}
		}
		if len(plots) > 0 && !*asJSON {
			fmt.Fprintln(stdout, "plots:", strings.Join(plots, " "))
		}
	}
	if runErr != nil {
		fmt.Fprintln(stderr, "kvshare bench:", runErr)
		return 1
	}
	return 0
}

// writeAllocs writes the allocation profile (every allocation since the
// process began) to path.
func writeAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		return errors.Join(err, f.Close())
	}
	return f.Close()
}

// benchStores points o at the stores the flags name: --store at
// measurement 5's pool (and 6's real-pool case) when it is a [mooncake]
// file, at measurement 7's server or cluster when it is a [redis] file,
// at measurement 9's directory when it is a [disk] file;
// --mooncake-dir at 5's, --redis-server at 7's (with --redis-cluster, set
// in o.Redis.Cluster before, a cluster started from it). Two ways to
// name the same store are refused (o.Validate refuses --store with
// --mooncake-dir).
func benchStores(o *bench.Options, store, mooncakeDir, redisServer string) error {
	o.Pool.MooncakeDir, o.Redis.Server = mooncakeDir, redisServer
	if store == "" {
		return nil
	}
	kind, err := storefile.Read(store)
	if err != nil {
		return fmt.Errorf("--store: %w", err)
	}
	switch kind {
	case storefile.Mooncake:
		o.Pool.StorePath = store
		return nil
	case storefile.Memory:
		return errors.New("--store: a [memory] file shapes the embedded store, which measurement 4 takes up front itself, sized for each row size: give a [mooncake], [redis] or [disk] file")
	case storefile.Disk:
		o.Disk.StorePath = store
		return nil
	}
	if redisServer != "" {
		return errors.New("--store (a [redis] file) and --redis-server are two ways to name a Redis server: give one")
	}
	o.Redis.StorePath = store
	return nil
}

// parseOnly reads --only: measurement numbers, comma-separated.
func parseOnly(s string) ([]bench.Measurement, error) {
	if s == "" {
		return nil, nil
	}
	var out []bench.Measurement
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > len(bench.AllMeasurements) {
			return nil, fmt.Errorf("--only %q: %q is not a measurement (1–%d)", s, f, len(bench.AllMeasurements))
		}
		out = append(out, bench.Measurement(n))
	}
	return out, nil
}

// progressBar draws the run's progress on w (a terminal) with
// schollz/progressbar, cleared when the run ends.
func progressBar(w io.Writer) bench.Progress {
	var bar *progressbar.ProgressBar
	return func(done, total int, what string) {
		if bar == nil {
			bar = progressbar.NewOptions(total,
				progressbar.OptionSetWriter(w),
				progressbar.OptionSetWidth(30),
				progressbar.OptionShowCount(),
				progressbar.OptionSetElapsedTime(true),
				progressbar.OptionSetPredictTime(true),
				progressbar.OptionClearOnFinish(),
				progressbar.OptionSetDescription(what))
		}
		bar.Describe(what)
		_ = bar.Set(done)
		if done >= total {
			_ = bar.Finish()
		}
	}
}
