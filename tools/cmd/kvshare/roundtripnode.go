package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/node"
	"github.com/kvshare/kvshare/tools/internal/roundtrip"
)

// engineCommand is the hidden subcommand an engine process of
// `kvshare roundtrip --node` runs: the kvshare binary started again.
const engineCommand = "roundtrip-engine"

// notWithNode are the roundtrip flags a round trip through a node does
// not take: it serves the embedded store, sized for the run.
var notWithNode = []string{"store", "mooncake-dir", "providers", "replicas", "redis-server", "redis-cluster", "gpu", "metrics"}

// nodeRoundTrip is `kvshare roundtrip --node`: a node over the embedded
// store started for the run in this process, and two engine processes
// (this binary again) attached to it — one lends its slots and
// publishes every row, then the other looks every row up, fetches what
// is present into its own lend and checks every byte. It prints what
// each moved and how fast; exit status 1 on any mismatch, row missing or
// memory the node still holds.
func nodeRoundTrip(ctx context.Context, cfg roundtrip.Config, fs *flag.FlagSet, stdout, stderr io.Writer) int {
	for _, name := range notWithNode {
		if flagSet(fs, name) {
			fmt.Fprintf(stderr, "kvshare roundtrip: --%s does not go with --node (the node serves the embedded store, sized for the run)\n", name)
			return 2
		}
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(stderr, "kvshare:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	o := roundtrip.SizedFor(cfg.Rows, cfg.RowBytes)
	o.HugePages = hostmem.HugePages2MiB
	store, err := memdrv.NewBoundedStore(o)
	if err != nil {
		fmt.Fprintln(stderr, "kvshare roundtrip: the embedded store:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "kvshare-roundtrip-node")
	if err != nil {
		fmt.Fprintln(stderr, "kvshare roundtrip:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	socket := filepath.Join(dir, "node.sock")
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	drv := memdrv.New(store, memdrv.Options{Workers: cfg.Workers, Logger: logger})
	n, err := node.New(node.Config{Driver: drv, Socket: socket, Logger: logger})
	if err != nil {
		fmt.Fprintln(stderr, "kvshare roundtrip:", err)
		return 1
	}
	l, err := node.Listen(socket, 0o600)
	if err != nil {
		fmt.Fprintln(stderr, "kvshare roundtrip:", err)
		return 1
	}
	serveCtx, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan error, 1)
	go func() { served <- n.Serve(serveCtx, l) }()

	// What the run is about is said once the publisher's engine did its
	// part: a run that never happened prints its error alone.
	plan := &plan{out: stdout}
	fmt.Fprintf(plan, "kvshare roundtrip --node: %d blocks of %s through a node (pid %d) at %s over the embedded store, %s; two engine processes, %d workers\n",
		cfg.Rows, size(cfg.RowBytes), os.Getpid(), socket, size(int64(cfg.Rows)*cfg.RowBytes), cfg.Workers)
	pub, perr := runEngineProcess(ctx, socket, roundtrip.Publisher, cfg, stderr)
	var fet roundtrip.EngineReport
	var ferr error
	if perr == nil {
		fet, ferr = runEngineProcess(ctx, socket, roundtrip.Fetcher, cfg, stderr)
	}
	ok := perr == nil && ferr == nil
	if perr == nil {
		plan.say()
		engineLine(stdout, "publish", pub)
	} else {
		fmt.Fprintln(stderr, "kvshare:", perr)
	}
	if ferr == nil && perr == nil {
		lk := fet.Lookup
		fmt.Fprintf(stdout, "lookup   %d present of %d asked, bound %d (%d lookups in %.3f ms, engine pid %d)\n",
			lk.Present, lk.Asked, lk.Bound, lk.Views, float64(lk.Elapsed.Microseconds())/1000, fet.PID)
		engineLine(stdout, "fetch", fet)
		fmt.Fprintf(stdout, "check    %d/%d rows byte-identical\n", fet.Checked-fet.Mismatches, cfg.Rows)
		ok = ok && fet.Mismatches == 0 && fet.Checked == cfg.Rows && pub.Moved.Delivered == cfg.Rows && pub.Returned && fet.Returned
	}

	shutCtx, stopShut := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer stopShut()
	held := n.Shutdown(shutCtx)
	stopServing()
	if err := <-served; err != nil && !errors.Is(err, node.ErrShutDown) && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "kvshare roundtrip: the node:", err)
		ok = false
	}
	// After a run that did not happen, only what the node kept is
	// said, on stderr.
	lent := stdout
	if !plan.said {
		lent = stderr
	}
	switch {
	case len(held) > 0:
		fmt.Fprintf(lent, "lent     the node still holds %v: its store and driver are left open\n", held)
		ok = false
	case !drv.Drain(shutCtx):
		fmt.Fprintln(lent, "lent     the node's driver did not drain: left open")
		ok = false
	default:
		closeErr := errors.Join(drv.Close(), store.Close())
		if plan.said {
			fmt.Fprintf(stdout, "lent     both lends returned and unmapped; the node holds nothing")
			if closeErr != nil {
				fmt.Fprintf(stdout, "; closing the store: %v", closeErr)
			}
			fmt.Fprintln(stdout)
		} else if closeErr != nil {
			fmt.Fprintln(stderr, "kvshare roundtrip: closing the store:", closeErr)
		}
		ok = ok && closeErr == nil
	}
	if ferr != nil {
		fmt.Fprintln(stderr, "kvshare:", ferr)
	}
	if !ok {
		fmt.Fprintln(stderr, "kvshare: round trip through the node FAILED")
		return 1
	}
	return 0
}

// engineLine prints what one engine process moved.
func engineLine(w io.Writer, what string, r roundtrip.EngineReport) {
	fmt.Fprintf(w, "%-8s %s; %s in %.3f s, %.2f GB/s (engine pid %d, %s lent as a memfd)\n",
		what, statuses(r.Moved.Rows), size(r.Moved.Bytes), r.Moved.Elapsed.Seconds(), r.Moved.GBps(), r.PID, size(r.Lent))
}

// runEngineProcess starts this binary again as an engine of role and
// waits for its report (the last line of its stdout, JSON).
func runEngineProcess(ctx context.Context, socket string, role roundtrip.Role, cfg roundtrip.Config, stderr io.Writer) (roundtrip.EngineReport, error) {
	var rep roundtrip.EngineReport
	self, err := os.Executable()
	if err != nil {
		return rep, fmt.Errorf("the engine process: %w", err)
	}
	cmd := exec.CommandContext(ctx, self, engineCommand, "--socket", socket, "--role", string(role),
		"--rows", strconv.Itoa(cfg.Rows), "--row-bytes", strconv.FormatInt(cfg.RowBytes, 10), "--view-rows", strconv.Itoa(cfg.ViewRows),
		"--seed", strconv.FormatUint(cfg.Seed, 10), "--timeout", cfg.Timeout.String())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &prefixed{w: stderr, prefix: "engine " + string(role) + ": "}
	if err := cmd.Run(); err != nil {
		return rep, fmt.Errorf("the %s engine process: %w", role, err)
	}
	line := bytes.TrimSpace(out.Bytes())
	if i := bytes.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	if err := json.Unmarshal(line, &rep); err != nil {
		return rep, fmt.Errorf("the %s engine process's report %q: %w", role, line, err)
	}
	return rep, nil
}

// prefixed writes to w with a prefix before each write (an engine
// process's stderr, as it comes).
type prefixed struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
}

func (p *prefixed) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := io.WriteString(p.w, p.prefix); err != nil {
		return 0, err
	}
	return p.w.Write(b)
}

// engineCmd is the engine process of `kvshare roundtrip --node`: it runs
// its role against the node at --socket and prints its report as one
// line of JSON. Exit status 1 when it could not do its part, 2 for bad
// usage.
func engineCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := roundtrip.Defaults()
	fs := flag.NewFlagSet("kvshare "+engineCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", "", "the node's socket")
	role := fs.String("role", "", "publish or fetch")
	fs.IntVar(&cfg.Rows, "rows", cfg.Rows, "rows")
	fs.Int64Var(&cfg.RowBytes, "row-bytes", cfg.RowBytes, "bytes a row")
	fs.IntVar(&cfg.ViewRows, "view-rows", cfg.ViewRows, "rows a view")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the published bytes")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "limit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *socket == "" || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kvshare %s: --socket PATH is required, and no argument\n", engineCommand)
		return 2
	}
	rep, err := roundtrip.RunEngine(ctx, roundtrip.EngineConfig{Socket: *socket, Role: roundtrip.Role(*role), Config: cfg}, os.Getpid())
	if err != nil {
		fmt.Fprintf(stderr, "kvshare %s: %v\n", engineCommand, err)
		return 1
	}
	b, err := json.Marshal(rep)
	if err != nil {
		fmt.Fprintf(stderr, "kvshare %s: %v\n", engineCommand, err)
		return 1
	}
	fmt.Fprintln(stdout, string(b))
	return 0
}
