package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/tools/internal/poolconfig"
	"github.com/kvshare/kvshare/tools/internal/roundtrip"
	"github.com/kvshare/kvshare/tools/internal/soak"
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
	storePath := fs.String("store", "", "store config file (TOML): soak the Mooncake pool it names")
	mooncakeDir := fs.String("mooncake-dir", "", "Mooncake folder (bin/, lib/): start a loopback pool from it and soak that")
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
	if *storePath != "" && *mooncakeDir != "" {
		fmt.Fprintln(stderr, "kvshare soak: --store and --mooncake-dir are two ways to name a pool: give one")
		return 2
	}
	if *mooncakeDir != "" {
		path, _, stop, err := poolconfig.Start(ctx, *mooncakeDir, pool.Options{}, logger)
		if err != nil {
			fmt.Fprintln(stderr, "kvshare:", err)
			return 1
		}
		defer func() {
			if err := stop(); err != nil {
				fmt.Fprintln(stderr, "kvshare: stopping the pool:", err)
			}
		}()
		*storePath = path
	}
	where := "the embedded in-memory store"
	if *storePath != "" {
		m, err := roundtrip.MooncakeStore(*storePath, logger)
		if err != nil {
			fmt.Fprintln(stderr, "kvshare:", err)
			return 2
		}
		cfg.Store = m
		where = m.Describe()
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(stderr, "kvshare:", err)
		return 2
	}
	fmt.Fprintf(stdout, "kvshare soak: %d lenders over %s for %v, seed %d\n", cfg.Lenders, where, cfg.Duration, cfg.Seed)
	rep, err := soak.Run(ctx, cfg)
	fmt.Fprintln(stdout, rep)
	if err != nil {
		fmt.Fprintln(stderr, "kvshare: soak FAILED:", err)
		return 1
	}
	return 0
}
