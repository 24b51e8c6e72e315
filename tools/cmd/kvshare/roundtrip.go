package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/redisdrv"
	"github.com/kvshare/kvshare/redisdrv/redistest"
	"github.com/kvshare/kvshare/tools/internal/redisconfig"
	"github.com/kvshare/kvshare/tools/internal/roundtrip"
	"github.com/kvshare/kvshare/tools/internal/storefile"
)

// roundtripCmd runs the main job: flags, a progress line on a terminal, the
// summary, and exit status 1 on any mismatch or leftover.
func roundtripCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := roundtrip.Defaults()
	fs := flag.NewFlagSet("kvshare roundtrip", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.Rows, "rows", cfg.Rows, "KV blocks (rows) to move")
	rowKiB := fs.Int64("row-kib", cfg.RowBytes>>10, "size of one block, in KiB")
	fs.IntVar(&cfg.ViewRows, "view-rows", cfg.ViewRows, "rows per submitted view (one attempt each)")
	fs.IntVar(&cfg.Workers, "workers", cfg.Workers, "worker goroutines of each in-memory driver (with --store: the file's [mooncake] or [redis] workers)")
	stores := addStoreFlags(fs, "run through", true)
	gpu := fs.Bool("gpu", false, "move the KV through two lenders' device pages on a GPU (the host stand-in, said so, when there is none)")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "limit for the whole run")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the published bytes")
	viaNode := fs.Bool("node", false, "through a node: start one for the run over the embedded store, and two engine processes (this binary again) that attach to it — one publishes, the other looks up and fetches what is present, every byte checked")
	floor := fs.Bool("floor", false, "over a Mooncake pool: also measure the raw floor in the same run — the same rows in the same calls straight on a client of the pool, before the job and after it (a pool started for the run is filled and emptied first) — and give publish/floor and fetch/floor")
	metricsAddr := fs.String("metrics", "", "serve the lenders' metrics in Prometheus text format at http://ADDR/metrics while the round trip runs (ADDR host:port, e.g. 127.0.0.1:9464)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kvshare roundtrip: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	cfg.RowBytes = *rowKiB << 10
	if *floor && (*viaNode || *gpu) {
		fmt.Fprintln(stderr, "kvshare roundtrip: --floor measures the main job over a Mooncake pool, not --node or --gpu")
		return 2
	}
	if *viaNode {
		return nodeRoundTrip(ctx, cfg, fs, stdout, stderr)
	}
	if line := stores.refused(); line != "" {
		fmt.Fprintln(stderr, "kvshare roundtrip:", line)
		return 2
	}
	if stores.redisServer != "" && flagSet(fs, "workers") {
		fmt.Fprintf(stderr, "kvshare roundtrip: -workers sets the in-memory drivers; with --redis-server each driver runs [redis] workers' default, %d\n", redisdrv.DefaultWorkers)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// A server started for the run holds what the run stores, twice over.
	st, code, err := stores.open(ctx, redistest.Options{MaxMemory: max(redisconfig.DefaultMaxMemory, 2*int64(max(cfg.Rows, 0))*max(cfg.RowBytes, 0))}, logger)
	if err != nil {
		fmt.Fprintln(stderr, "kvshare:", err)
		return code
	}
	defer st.close(stderr)
	if st.path != "" && flagSet(fs, "workers") {
		fmt.Fprintf(stderr, "kvshare roundtrip: -workers sets the in-memory drivers; with --store, set [%s] workers in the store config\n", section(st.kind))
		return 2
	}
	store, err := st.jobStore(logger)
	if err != nil {
		fmt.Fprintln(stderr, "kvshare:", err)
		return 2
	}
	if store != nil {
		store.Configure(&cfg)
	}
	if *floor {
		if _, ok := store.(*roundtrip.Mooncake); !ok {
			fmt.Fprintln(stderr, "kvshare roundtrip: --floor is the raw floor of a Mooncake pool: give --mooncake-dir DIR or a --store file of [mooncake]")
			return 2
		}
		cfg.Floor = true
	}
	if m, ok := store.(*roundtrip.Mooncake); ok && st.pool != nil {
		// A pool started for the run is fresh: whatever writes into its
		// segment first pays the provider's page faults (measured: a
		// 256 MiB publish 5 to 10 times slower). It is warmed first.
		m.WarmFirst(poolWarmCap)
	}
	if *gpu {
		return gpuRoundTrip(ctx, cfg.Store, cfg.KeyPrefix, stdout, stderr)
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(stderr, "kvshare:", err)
		return 2
	}
	if cfg.Store == nil {
		// The embedded store holds the run's rows, its memory taken up
		// front on huge pages where the system has them.
		o := roundtrip.SizedFor(cfg.Rows, cfg.RowBytes)
		o.HugePages = hostmem.HugePages2MiB
		s, err := roundtrip.NewMemoryStore(cfg.Workers, o)
		if err != nil {
			fmt.Fprintln(stderr, "kvshare roundtrip:", err)
			return 1
		}
		cfg.Store = s
	}
	defer closeStore(cfg.Store, stderr)

	// What the run is about is said once it has started: a store that
	// cannot be opened gets its error alone.
	plan := &plan{out: stdout}
	fmt.Fprintf(plan, "kvshare roundtrip: %d blocks of %s through %s (%d views, %d workers per driver)\n",
		cfg.Rows, size(cfg.RowBytes), cfg.Store.Describe(), (cfg.Rows+cfg.ViewRows-1)/cfg.ViewRows, cfg.Store.Workers())
	if st.about != "" {
		fmt.Fprintf(plan, "server   %s\n", st.about)
	}
	if *metricsAddr != "" {
		endpoint, err := serveMetrics(*metricsAddr, plan, stderr)
		if err != nil {
			fmt.Fprintln(stderr, "kvshare roundtrip: --metrics:", err)
			return 2
		}
		defer endpoint.close()
		cfg.Observe = endpoint.Observer(endpoint.warn)
		if m, ok := cfg.Store.(*roundtrip.MemoryStore); ok {
			unregister, err := endpoint.ObserveStore("embedded", m.Store())
			if err != nil {
				fmt.Fprintln(stderr, "kvshare roundtrip: --metrics:", err)
				return 1
			}
			defer func() {
				if err := unregister(); err != nil {
					endpoint.warn(err)
				}
			}()
		}
	}
	var progress roundtrip.Progress
	if isTerminal(stdout) {
		progress = func(phase string, done, total int) {
			fmt.Fprintf(stdout, "\r%-8s %d/%d rows", phase, done, total)
			if done == total {
				fmt.Fprint(stdout, "\r\033[K")
			}
		}
	}
	cfg.Observe = plan.sayOnceOpen(cfg.Observe)
	rep, err := roundtrip.Run(ctx, cfg, progress)
	if !plan.said && err != nil {
		// The lenders did not open (the store's driver, their memory):
		// nothing ran, so nothing of a result is printed.
		fmt.Fprintln(stderr, "kvshare:", err)
		return 1
	}
	plan.say()
	if st.path != "" && rep.KeyPrefix != "" {
		fmt.Fprintf(stdout, "keys     %s/v1/<hex name> (this run's own prefix: a put never overwrites)\n", rep.KeyPrefix)
	}
	if rep.Warmed > 0 {
		fmt.Fprintf(stdout, "warmed   %s put into the pool started for the run and removed before the job: the first writes into a fresh segment are not measured\n", size(rep.Warmed))
	}
	summary(stdout, rep, err == nil)
	floorLines(stdout, rep)
	if m, ok := cfg.Store.(*roundtrip.MemoryStore); ok {
		storeLine(stdout, m.Stats())
	}
	if err != nil {
		fmt.Fprintln(stderr, "kvshare:", err)
		return 1
	}
	if !rep.OK() {
		fmt.Fprintln(stderr, "kvshare: round trip FAILED")
		return 1
	}
	return 0
}

// poolWarmCap bounds what the round trip puts into a pool started for
// the run before measuring: it stops at the first put the full pool
// refuses.
const poolWarmCap = 64 << 30

// floorLines prints the raw floor measured beside the job and the job's
// ratios to it.
func floorLines(w io.Writer, rep roundtrip.Report) {
	f := rep.Floor
	if f == nil {
		return
	}
	sh := f.Shape
	fmt.Fprintf(w, "floor    the same rows straight on a client of the pool: views of %d, calls of at most %d rows and %s, goroutines %d; keys %s/v1/<hex name>, removed after each round\n",
		sh.ViewRows, sh.RowsPerCall, size(sh.BytesPerCall), sh.Workers, f.KeyPrefix)
	if rep.Warmed == 0 {
		fmt.Fprintln(w, "floor    the pool's segment not warmed (a pool this run did not start): the round before the job may pay its first writes")
	}
	for _, r := range []struct {
		when  string
		round roundtrip.FloorRound
	}{{"before", f.Before}, {"after", f.After}} {
		fmt.Fprintf(w, "floor    %-6s the job: publish %d ready in %.3f s, %.2f GB/s; fetch %d ready in %.3f s, %.2f GB/s\n", r.when,
			r.round.Publish.Delivered, r.round.Publish.Elapsed.Seconds(), r.round.Publish.GBps(), r.round.Fetch.Delivered, r.round.Fetch.Elapsed.Seconds(), r.round.Fetch.GBps())
	}
	pub, fetch := rep.Ratios()
	fmt.Fprintf(w, "ratio    publish/floor %.2f, fetch/floor %.2f (the job's rate over the mean of the two floor rounds)\n", pub, fetch)
}

// storeLine prints the embedded store's figures after a run.
func storeLine(w io.Writer, st memdrv.StoreStats) {
	fmt.Fprintf(w, "store    %d objects, %s in %s of chunks; %d evicted (%s), %d declined\n",
		st.Objects, size(st.Bytes), size(st.InUse), st.Evictions, size(st.EvictedBytes), st.Declines)
}

// lookupLine prints what the lookups before the fetch found.
func lookupLine(w io.Writer, l roundtrip.Lookup) {
	switch {
	case l.Err != nil:
		fmt.Fprintf(w, "lookup   not asked: %v\n", l.Err)
	case l.Views > 0:
		fmt.Fprintf(w, "lookup   %d present of %d asked, bound %d (%d lookups in %.3f ms)\n",
			l.Present, l.Asked, l.Bound, l.Views, float64(l.Elapsed.Microseconds())/1000)
	}
}

func summary(w io.Writer, rep roundtrip.Report, ran bool) {
	if rep.Memory.Bytes > 0 {
		fmt.Fprintf(w, "memory   each lender: %v\n", rep.Memory)
	}
	for _, p := range []struct {
		name string
		ph   roundtrip.Phase
	}{{"publish", rep.Publish}, {"fetch", rep.Fetch}} {
		if p.name == "fetch" {
			lookupLine(w, rep.Lookup)
		}
		fmt.Fprintf(w, "%-8s %s; %s in %.3f s, %.2f GB/s\n", p.name, statuses(p.ph.Rows), size(p.ph.Bytes), p.ph.Elapsed.Seconds(), p.ph.GBps())
	}
	if ran {
		fmt.Fprintf(w, "check    %d/%d rows byte-identical\n", rep.Config.Rows-rep.Mismatches, rep.Config.Rows)
	}
	fmt.Fprintf(w, "lent     %d rows, %s left after quiescence", rep.RowsLent, size(rep.BytesLent))
	if rep.Freed {
		fmt.Fprint(w, "; both regions returned to their lenders")
	}
	fmt.Fprintln(w)
}

// section is the store section of a kind of store file.
func section(k storefile.Kind) string {
	switch k {
	case storefile.Redis:
		return storefile.RedisSection
	case storefile.Memory:
		return storefile.MemorySection
	case storefile.Disk:
		return storefile.DiskSection
	}
	return storefile.MooncakeSection
}

// flagSet reports whether the command line set the named flag.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// statuses lists every non-zero row count by status.
func statuses(rows [contract.RowStatusCount]int64) string {
	var parts []string
	for s, n := range rows {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %v", n, contract.RowStatus(s)))
		}
	}
	if len(parts) == 0 {
		return "no rows"
	}
	return strings.Join(parts, ", ")
}

// size prints bytes in binary units.
func size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
