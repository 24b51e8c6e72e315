package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/kvshare/kvshare/mooncakedrv/pool"

	"github.com/kvshare/kvshare/redisdrv/redistest"
	"github.com/kvshare/kvshare/tools/internal/soak"
	"github.com/kvshare/kvshare/tools/internal/storefile"
)

// soakCmd runs the soak: random publishes, fetches, cancels and rebinds
// on several backends over one store, every promise checked; exit 1 when
// one broke.
func soakCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := soak.Defaults()
	fs := flag.NewFlagSet("kvshare soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	short := fs.Bool("short", false, "run for one minute (the default is ten)")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long lenders keep starting rounds")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the run's choices (printed; reproduces them)")
	fs.IntVar(&cfg.Lenders, "lenders", cfg.Lenders, "backends over the one store")
	stores := addStoreFlags(fs, "soak", true)
	killEvery := fs.Duration("kill-every", 0, "with --mooncake-dir: kill a segment provider and start it again, empty, this often, one provider after another; with --store naming the disk tier ([disk]): run a writer process that puts rows, kill it (SIGKILL) this long after it opens the store, reopen the directory and check every object whole or absent and every Ready put present, round after round (0: never)")
	fs.BoolVar(&cfg.Reclaim, "reclaim", false, "with --kill-every: win back the memory of attempts a kill left unprovable (each driver destroys its store client and opens a fresh one) instead of keeping the lender's region for good")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kvshare soak: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *short && !flagSet(fs, "duration") {
		cfg.Duration = soak.Short().Duration
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if line := stores.refused(); line != "" {
		fmt.Fprintln(stderr, "kvshare soak:", line)
		return 2
	}
	st, code, err := stores.open(ctx, redistest.Options{}, logger)
	if err != nil {
		fmt.Fprintln(stderr, "kvshare:", err)
		return code
	}
	defer st.close(stderr)
	if *killEvery > 0 && st.kind == storefile.Disk {
		return diskKillSoak(ctx, st.path, *killEvery, cfg.Duration, stdout, stderr)
	}
	if *killEvery > 0 {
		if st.pool == nil {
			fmt.Fprintln(stderr, "kvshare soak: --kill-every kills the providers of a pool started from --mooncake-dir DIR, or the writer of the disk tier a [disk] store file names, neither given here")
			return 2
		}
		cfg.Faults = killProviders(st.pool, *killEvery, logger)
	}
	store, err := st.jobStore(logger)
	if err != nil {
		fmt.Fprintln(stderr, "kvshare:", err)
		return 2
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(stderr, "kvshare:", err)
		return 2
	}
	if store != nil {
		cfg.Store = store
	} else {
		m, err := soak.EmbeddedStore(cfg)
		if err != nil {
			fmt.Fprintln(stderr, "kvshare soak:", err)
			return 1
		}
		cfg.Store = m
	}
	defer closeStore(cfg.Store, stderr)
	where := cfg.Store.Describe()
	if st.about != "" {
		where += " (" + st.about + ")"
	}
	fmt.Fprintf(stdout, "kvshare soak: %d lenders over %s for %v, seed %d\n", cfg.Lenders, where, cfg.Duration, cfg.Seed)
	rep, err := soak.Run(ctx, cfg)
	if err != nil && rep.Publishes == 0 && rep.Fetches == 0 {
		fmt.Fprintln(stderr, "kvshare: soak FAILED before its first attempt:", err) // no result to print beside it
		return 1
	}
	fmt.Fprintln(stdout, rep)
	if err != nil {
		fmt.Fprintln(stderr, "kvshare: soak FAILED:", err)
		return 1
	}
	return 0
}

// killProviders is a soak's faults: every period, the next provider of p
// is killed (SIGKILL) and started again, empty, one second later.
func killProviders(p *pool.Pool, period time.Duration, logger *slog.Logger) func(context.Context) {
	return func(ctx context.Context) {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for i := 0; ; i = (i + 1) % p.Providers() {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if err := p.KillProviderAt(i); err != nil {
				logger.Warn("kvshare soak: killing a provider", "provider", i, "err", err)
				continue
			}
			time.Sleep(time.Second)
			if err := p.StartProviderAt(context.WithoutCancel(ctx), i); err != nil {
				logger.Warn("kvshare soak: starting a provider again", "provider", i, "err", err)
			}
		}
	}
}
