package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/node"
	"github.com/kvshare/kvshare/storeconfig"
	"github.com/kvshare/kvshare/tools/internal/roundtrip"
	"github.com/kvshare/kvshare/tools/internal/storefile"
)

// nodeCmd serves the kvshare node until SIGINT or SIGTERM (or ctx's
// end), then shuts it down: engines in other processes attach over a
// Unix socket, lend memory and move rows through one store — the
// embedded bounded store by default, or the store a store file names.
// The exit status is 0 when everything was given back, 1 when the node
// failed or still held engines' memory at the end, 2 for bad usage.
func nodeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kvshare node", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nf := addNodeFlags(fs)
	ef := addEventFlags(fs)
	capacity := fs.String("capacity", "1GiB", "bytes the embedded store takes up front (not with --store: a [memory] section sizes its own)")
	store := fs.String("store", "", "store file (TOML: [blob] and [memory], [mooncake], [redis] or [disk], and optionally [node]): serve the store it names instead of the default embedded store, with its [node] settings (a flag given overrides its key)")
	workers := fs.Int("workers", 8, "worker goroutines of the embedded store's driver (a row held inside the store keeps one)")
	metricsAddr := fs.String("metrics", "", "serve the node's metrics (engines, bytes lent, in flight, held, refused attaches; per engine by its name) in Prometheus text at http://ADDR/metrics while it runs (host:port; port 0 picks one)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kvshare node: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	var fileNode storeconfig.Node
	if *store != "" {
		n, err := storefile.Node(*store)
		if err != nil {
			fmt.Fprintln(stderr, "kvshare node:", err)
			return 2
		}
		fileNode = n
	}
	cfg, shutdownWait, line := nf.config(fileNode)
	if line != "" {
		fmt.Fprintln(stderr, "kvshare node:", line)
		return 2
	}
	if *store != "" && flagSet(fs, "capacity") {
		fmt.Fprintln(stderr, "kvshare node: --capacity shapes the embedded store; a store file's [memory] section shapes its own")
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg.Logger = logger

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	served, code, err := openNodeStore(ctx, *store, *capacity, *workers, logger)
	if err != nil {
		fmt.Fprintln(stderr, "kvshare node:", err)
		return code
	}
	cfg.Driver = served.drv
	cfg.KeyPrefix, cfg.MaxRowsPerCall, cfg.MaxBytesPerCall = served.run.KeyPrefix, served.run.RowsPerCall, served.run.BytesPerCall
	pub, stopEvents, err := ef.open(ctx, *store, logger)
	if err != nil {
		served.close(ctx, stderr)
		fmt.Fprintln(stderr, "kvshare node: --events:", err)
		return 2
	}
	defer stopEvents() // after the shutdown: the node tells it nothing more
	if pub != nil {
		cfg.Events = pub
	}
	n, err := node.New(cfg)
	if err != nil {
		served.close(ctx, stderr)
		fmt.Fprintln(stderr, "kvshare node:", err)
		return 2
	}
	if err := os.MkdirAll(filepath.Dir(cfg.Socket), 0o700); err != nil {
		served.close(ctx, stderr)
		fmt.Fprintln(stderr, "kvshare node:", err)
		return 1
	}
	l, err := node.Listen(cfg.Socket, cfg.Mode)
	if err != nil {
		served.close(ctx, stderr)
		fmt.Fprintln(stderr, "kvshare node:", err)
		return 1
	}
	defer os.Remove(cfg.Socket)
	var endpoint *metricsEndpoint
	if *metricsAddr != "" {
		e, unregister, err := serveNodeMetrics(*metricsAddr, n, served, stderr)
		if err != nil {
			fmt.Fprintln(stderr, "kvshare node: --metrics:", err)
			l.Close()
			n.Shutdown(ctx)
			served.close(ctx, stderr)
			return 2
		}
		endpoint = e
		defer endpoint.close()
		defer unregister()
	}
	fmt.Fprintf(stdout, "kvshare node: serving %s at %s (mode %04o, uids %s)%s\n", served.about, cfg.Socket, cfg.Mode, uidList(cfg.AllowUIDs), fromFile(*store, fileNode))
	if endpoint != nil {
		fmt.Fprintf(stdout, "kvshare node: metrics at %s (Prometheus text, while the node runs)\n", endpoint.URL())
	}
	if ef.about != "" {
		fmt.Fprintln(stdout, ef.about)
	}

	serveErr := n.Serve(ctx, l)
	if ctx.Err() == nil && serveErr != nil {
		fmt.Fprintln(stderr, "kvshare node:", serveErr)
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownWait)
	defer cancel()
	held := n.Shutdown(sctx)
	s := n.Stats()
	fmt.Fprintf(stdout, "kvshare node: shut down after %d sessions: %d attempts, %d lookups, %d refusals, %d sessions ended by the node, %d peers refused\n",
		s.Attached, s.Attempts, s.Lookups, s.Refused(), s.Disconnects(), s.PeersRefused)
	if len(held) > 0 {
		// The store may still touch that memory: the driver stays open
		// until the process exits, and so does every mapping.
		fmt.Fprintf(stderr, "kvshare node: still held at exit (%d bytes of %d lends): %s\n", s.HeldBytes, s.HeldLends, strings.Join(held, "; "))
		return 1
	}
	if !served.close(sctx, stderr) {
		return 1
	}
	if ctx.Err() == nil && serveErr != nil {
		return 1
	}
	return 0
}

// nodeStore is the store a node serves: its one driver, the run config
// its store file gives (key prefix, caps per call), what to call it, and
// the store to close after the driver.
type nodeStore struct {
	drv   contract.Driver
	run   roundtrip.Config
	about string
	store roundtrip.Store
}

// openNodeStore opens the driver of the store file at path, or of an
// embedded store of capacity (a size: "512MiB") when path is empty. The
// exit status of an error is 2 for bad usage, 1 for a store that did not
// open.
func openNodeStore(ctx context.Context, path, capacity string, workers int, logger *slog.Logger) (nodeStore, int, error) {
	var js jobStore
	if path != "" {
		kind, err := storefile.Read(path)
		if err != nil {
			return nodeStore{}, 2, err
		}
		js, err = started{path: path, kind: kind}.jobStore(logger)
		if err != nil {
			return nodeStore{}, 2, err
		}
	} else {
		c, err := parseSize(capacity)
		if err != nil {
			return nodeStore{}, 2, fmt.Errorf("--capacity: %w", err)
		}
		if workers <= 0 {
			return nodeStore{}, 2, fmt.Errorf("--workers is %d, want > 0", workers)
		}
		m, err := roundtrip.NewMemoryStore(workers, memdrv.StoreOptions{Capacity: c, HugePages: hostmem.HugePages2MiB})
		if err != nil {
			return nodeStore{}, 1, err
		}
		js = m
	}
	var run roundtrip.Config
	js.Configure(&run)
	drv, err := js.OpenDriver(ctx, "node")
	if err != nil {
		closeStore(js, io.Discard)
		return nodeStore{}, 1, err
	}
	return nodeStore{drv: drv, run: run, about: js.Describe(), store: js}, 0, nil
}

// close drains and closes the driver, then the store; it reports whether
// both went, saying why on stderr when not.
func (s nodeStore) close(ctx context.Context, stderr io.Writer) bool {
	if !s.drv.Drain(ctx) {
		fmt.Fprintln(stderr, "kvshare node: the store's driver did not drain; left open")
		return false
	}
	if err := s.drv.Close(); err != nil {
		fmt.Fprintln(stderr, "kvshare node: closing the store's driver:", err)
		return false
	}
	closeStore(s.store, stderr)
	return true
}

// serveNodeMetrics serves the node's figures at addr (node=kvshare), and
// the embedded store's when it is the one served (store=embedded); the
// function returned unregisters them, warning of a failure on stderr.
func serveNodeMetrics(addr string, n *node.Node, served nodeStore, stderr io.Writer) (*metricsEndpoint, func(), error) {
	e, err := serveMetrics(addr, io.Discard, stderr)
	if err != nil {
		return nil, nil, err
	}
	var unregs []func() error
	unregister := func() {
		for _, u := range unregs {
			if err := u(); err != nil {
				e.warn(err)
			}
		}
	}
	u, err := e.ObserveNode("kvshare", n)
	if err != nil {
		e.close()
		return nil, nil, err
	}
	unregs = append(unregs, u)
	if m, ok := served.store.(*roundtrip.MemoryStore); ok {
		u, err := e.ObserveStore("embedded", m.Store())
		if err != nil {
			unregister()
			e.close()
			return nil, nil, err
		}
		unregs = append(unregs, u)
	}
	return e, unregister, nil
}

// fromFile says, on the first line, where the node's settings came from
// when the store file holds a [node] section.
func fromFile(path string, n storeconfig.Node) string {
	if path == "" || reflect.DeepEqual(n, storeconfig.Node{}) {
		return ""
	}
	return "; [node] of " + path + ", flags over it"
}

// defaultSocket is $XDG_RUNTIME_DIR/kvshare/node.sock, or "".
func defaultSocket() string {
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		return filepath.Join(dir, "kvshare", "node.sock")
	}
	return ""
}

// uidList is the allow-list as the first line shows it.
func uidList(uids []uint32) string {
	if len(uids) == 0 {
		return strconv.Itoa(os.Getuid())
	}
	s := make([]string, len(uids))
	for i, u := range uids {
		s[i] = strconv.FormatUint(uint64(u), 10)
	}
	return strings.Join(s, ",")
}

// parseSize reads a byte count: digits, optionally followed by KiB,
// MiB, GiB or TiB.
func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		shift  uint
	}{{"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}}
	digits, shift := s, uint(0)
	for _, u := range units {
		if d, ok := strings.CutSuffix(s, u.suffix); ok {
			digits, shift = d, u.shift
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(digits), 10, 64)
	if err != nil || n < 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("%q is not a size: want bytes, or a number with KiB, MiB, GiB or TiB", s)
	}
	return n << shift, nil
}
