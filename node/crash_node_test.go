package node

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/patience"
	"github.com/kvshare/kvshare/redisdrv"
)

// The crash tests run the node as a process of its own — the test
// binary again, with -test.run=^TestHelperNode$ — so that it can be
// SIGKILLed under an engine (the test process, through nodeclient).
// The node serves the socket KVSHARE_TEST_NODE_SOCKET over the store
// KVSHARE_TEST_NODE_STORE: "memdrv" (a bounded store of its own) or
// "redis:FILE" / "mooncake:FILE" (a store file), with the tenants of
// KVSHARE_TEST_NODE_TENANTS (scope_process_test.go). It takes commands, one
// a line, on its stdin and answers each with one line on its stdout,
// "node: ok …" or "node: fail …":
//
//	hold-get NAME   (memdrv) hold, inside the store, every read of row NAME
//	held            (memdrv) wait for a read to be held
//	release         (memdrv) let the held reads go on, and stop holding
//	open            wait for the driver to hold an operation whose access is open
//
// It shuts down when its stdin ends.
const (
	envNodeSocket = "KVSHARE_TEST_NODE_SOCKET"
	envNodeStore  = "KVSHARE_TEST_NODE_STORE"
)

// TestHelperNode is not a test: it is the node process of the crash
// tests; without their environment it skips.
func TestHelperNode(t *testing.T) {
	socket := os.Getenv(envNodeSocket)
	if socket == "" {
		t.Skip("the node process of the crash tests, started by them")
	}
	if err := runNode(socket, os.Getenv(envNodeStore), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stdout, "node: fail %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// openStoreFor opens the driver the store argument names; opsOpen says
// how many of its operations' access is open now.
func openStoreFor(ctx context.Context, store string, logger *slog.Logger) (drv contract.Driver, prefix string, opsOpen func() int64, mem *memdrv.Store, closeAll func() error, err error) {
	kind, file, _ := strings.Cut(store, ":")
	switch kind {
	case "memdrv":
		s, err := memdrv.NewBoundedStore(memdrv.StoreOptions{Capacity: 16 << 20, ChunkBytes: 4096})
		if err != nil {
			return nil, "", nil, nil, nil, err
		}
		d := memdrv.New(s, memdrv.Options{Workers: 8})
		return d, "", nil, s, func() error { return errors.Join(d.Close(), s.Close()) }, nil
	case "redis":
		d, blob, err := redisdrv.Open(ctx, file, logger)
		if err != nil {
			return nil, "", nil, nil, nil, err
		}
		return d, blob.KeyPrefix, func() int64 { return d.Stats().OpsOpen }, nil, d.Close, nil
	case "mooncake":
		d, blob, err := mooncakedrv.Open(ctx, file, logger)
		if err != nil {
			return nil, "", nil, nil, nil, err
		}
		return d, blob.KeyPrefix, func() int64 { return d.Stats().OpsOpen }, nil, d.Close, nil
	}
	return nil, "", nil, nil, nil, fmt.Errorf("unknown store %q", store)
}

// runNode serves a node until in ends, then shuts it down.
func runNode(socket, store string, in io.Reader, out io.Writer) error {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	octx, cancel := patience.Bound{Span: patience.Wait(), What: "opening the store"}.Context(ctx)
	drv, prefix, opsOpen, mem, closeAll, err := openStoreFor(octx, store, logger)
	cancel()
	if err != nil {
		return err
	}
	tenants, err := nodeTenants()
	if err != nil {
		return err
	}
	n, err := New(Config{Driver: drv, KeyPrefix: prefix, Socket: socket, Logger: logger, Tenants: tenants})
	if err != nil {
		return err
	}
	l, err := Listen(socket, n.cfg.Mode)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- n.Serve(ctx, l) }()
	fmt.Fprintf(out, "node: ok ready pid %d\n", os.Getpid())
	var gate *memdrv.TransferGate
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) == 0 {
			continue
		}
		wctx, cancel := patience.Bound{Span: patience.Wait(), What: "node " + f[0]}.Context(ctx)
		var said string
		switch {
		case f[0] == "hold-get" && len(f) == 2 && mem != nil:
			var k string
			if k, err = keys.Stem(n.stem).Key([]byte(f[1])); err == nil {
				gate = mem.HoldTransfers(memdrv.GetDir, k)
				said = "hold-get " + f[1]
			}
		case f[0] == "held" && gate != nil:
			err, said = gate.Held(wctx), "held"
		case f[0] == "release" && gate != nil:
			gate.Release()
			said = "release"
		case f[0] == "open" && opsOpen != nil:
			tick := time.NewTicker(time.Millisecond) // the driver's count is polled: nothing signals it
			for opsOpen() == 0 && err == nil {
				select {
				case <-tick.C:
				case <-wctx.Done():
					err = fmt.Errorf("no operation open in the store: %w", wctx.Err())
				}
			}
			tick.Stop()
			said = fmt.Sprintf("open %d", opsOpen())
		default:
			err = fmt.Errorf("unknown command %q", lines.Text())
		}
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w", lines.Text(), err)
		}
		fmt.Fprintf(out, "node: ok %s\n", said)
	}
	sctx, cancel := patience.Bound{Span: patience.Wait(), What: "the node's shutdown"}.Context(ctx)
	defer cancel()
	if held := n.Shutdown(sctx); len(held) > 0 {
		return fmt.Errorf("the node kept memory at shutdown: %v", held)
	}
	if err := <-served; !errors.Is(err, ErrShutDown) {
		return fmt.Errorf("serve: %w", err)
	}
	if d, ok := drv.(interface{ Drain(context.Context) bool }); ok && !d.Drain(sctx) {
		return errors.New("the driver did not drain")
	}
	return closeAll()
}

// nodeProc is a node process of a crash test.
type nodeProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	socket string
	stdin  io.WriteCloser
	lines  chan string
}

// startNode starts a node process over store (see TestHelperNode) with
// env added to its environment, and waits for it to serve.
func startNode(t *testing.T, store string, env ...string) *nodeProc {
	t.Helper()
	dir, err := os.MkdirTemp("", "kvnode") // short: a socket path has a 108-byte cap
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	p := &nodeProc{t: t, socket: filepath.Join(dir, "node.sock"), lines: make(chan string, 16)}
	p.cmd = exec.Command(os.Args[0], "-test.run=^TestHelperNode$", "-test.v=false")
	p.cmd.Env = append(append(os.Environ(), envNodeSocket+"="+p.socket, envNodeStore+"="+store), env...)
	p.stdin, err = p.cmd.StdinPipe()
	require.NoError(t, err)
	out, err := p.cmd.StdoutPipe()
	require.NoError(t, err)
	p.cmd.Stderr = t.Output()
	require.NoError(t, p.cmd.Start())
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "node: "); ok {
				p.lines <- line
			}
		}
	}()
	t.Cleanup(func() {
		_ = p.stdin.Close()
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	})
	require.Equal(t, fmt.Sprintf("ok ready pid %d", p.cmd.Process.Pid), p.answer())
	return p
}

// answer reads the node's next line within the tests' patience.
func (p *nodeProc) answer() string {
	p.t.Helper()
	ctx, cancel := patience.For(p.t).Context(context.Background())
	defer cancel()
	select {
	case line, ok := <-p.lines:
		require.True(p.t, ok, "the node process ended")
		return line
	case <-ctx.Done():
		p.t.Fatalf("the node process did not answer: %v", ctx.Err())
		return ""
	}
}

// do sends the node a command and requires its "ok" answer.
func (p *nodeProc) do(cmd string) string {
	p.t.Helper()
	_, err := fmt.Fprintln(p.stdin, cmd)
	require.NoError(p.t, err)
	line := p.answer()
	require.Truef(p.t, strings.HasPrefix(line, "ok "), "node %s: %s", cmd, line)
	return line
}

// stop ends the node's stdin: it shuts down and must exit cleanly.
func (p *nodeProc) stop() {
	p.t.Helper()
	require.NoError(p.t, p.stdin.Close())
	for line := range p.lines {
		require.Failf(p.t, "the node process said more", "%s", line)
	}
	require.NoError(p.t, p.cmd.Wait())
}
