package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/kvshare/kvshare/redisdrv/redistest"
	"github.com/kvshare/kvshare/tools/internal/doctor"
)

// doctorCmd checks a store config and the pool it names, and/or a
// running node (--node): one line per check, exit status 1 when any
// failed.
func doctorCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kvshare doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stores := addStoreFlags(fs, "check", false)
	nodeSocket := fs.String("node", "", "check the kvshare node listening at this Unix socket: attach as a lookup-only engine, report its welcome, socket and counters, look a name up (with --store, both are checked)")
	wait := fs.Duration("wait", doctor.DefaultWait, "bound of each network wait (Mooncake: master, metadata server, client setup; Redis: the dial and every command)")
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
	if line := stores.refused(); line != "" {
		fmt.Fprintln(stderr, "kvshare doctor:", line)
		return 2
	}
	if stores.store == "" && stores.redisServer == "" && *nodeSocket == "" {
		fmt.Fprintln(stderr, "kvshare doctor: --store is required (the store config file to check), or --redis-server to start a loopback Redis server and check that, or --node SOCKET to check a running node")
		return 2
	}
	nodeFailed := false
	if *nodeSocket != "" {
		fmt.Fprintf(stdout, "kvshare doctor: the node at %s\n", *nodeSocket)
		rep := doctor.RunNode(ctx, *nodeSocket, *wait)
		rep.Write(stdout)
		nodeFailed = rep.Failed()
		if stores.store == "" && stores.redisServer == "" {
			if nodeFailed {
				return 1
			}
			return 0
		}
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	path := stores.store
	if stores.redisServer != "" {
		// Only a started server is opened here: a store file, with its
		// refusals, is the doctor's first check.
		st, code, err := stores.open(ctx, redistest.Options{}, logger)
		if err != nil {
			fmt.Fprintln(stderr, "kvshare:", err)
			return code
		}
		defer st.close(stderr)
		path = st.path
		fmt.Fprintf(stdout, "kvshare doctor: %s (%s)\n", path, st.about)
	} else {
		fmt.Fprintf(stdout, "kvshare doctor: %s\n", path)
	}
	rep := doctor.Run(ctx, doctor.Options{
		ConfigPath: path,
		Wait:       *wait,
		Logger:     logger,
	})
	rep.Write(stdout)
	if rep.Failed() || nodeFailed {
		return 1
	}
	return 0
}
