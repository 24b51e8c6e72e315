package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/kvshare/kvshare/tools/internal/doctor"
)

// doctorCmd checks a store config and the pool it names: one line per
// check, exit status 1 when any failed.
func doctorCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kvshare doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	store := fs.String("store", "", "the store config file (TOML, [blob] and [mooncake]) to check")
	wait := fs.Duration("wait", doctor.DefaultWait, "bound of each network wait (master, metadata server, client setup)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kvshare doctor: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *store == "" {
		fmt.Fprintln(stderr, "kvshare doctor: --store is required (the store config file to check)")
		return 2
	}
	fmt.Fprintf(stdout, "kvshare doctor: %s\n", *store)
	rep := doctor.Run(ctx, doctor.Options{
		ConfigPath: *store,
		Wait:       *wait,
		Logger:     slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	rep.Write(stdout)
	if rep.Failed() {
		return 1
	}
	return 0
}
