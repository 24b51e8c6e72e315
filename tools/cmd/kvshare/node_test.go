package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/patience"
)

// nodeSocket is a socket path short enough for a Unix address.
func nodeSocket(t *testing.T) string {
	dir, err := os.MkdirTemp("", "kvnode")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "node.sock")
}

// serving waits for the node's first line on r, "kvshare node: serving
// …", and returns it, and a function that waits for r's end and returns
// the lines after the first.
func serving(t *testing.T, r io.Reader) (string, func() string) {
	t.Helper()
	lines := make(chan string, 1)
	ended := make(chan struct{})
	var rest strings.Builder
	go func() {
		defer close(ended)
		sc := bufio.NewScanner(r)
		for first := true; sc.Scan(); first = false {
			if first {
				lines <- sc.Text()
				continue
			}
			rest.WriteString(sc.Text() + "\n")
		}
		close(lines)
	}()
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	var line string
	select {
	case l, ok := <-lines:
		require.True(t, ok, "the node ended before it served")
		line = l
	case <-ctx.Done():
		t.Fatal("the node did not start serving")
	}
	require.Contains(t, line, "kvshare node: serving")
	return line, func() string {
		require.True(t, patience.For(t).Wait(ended), "the node's output did not end")
		return rest.String()
	}
}

// syncBuffer is a buffer several goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// nodeEngine is an engine of the test, speaking the protocol with
// nodewire directly.
type nodeEngine struct {
	t    *testing.T
	w    *nodewire.Conn
	next uint64
}

func attachNode(t *testing.T, socket, name string) *nodeEngine {
	t.Helper()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: socket, Net: "unix"})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(patience.Wait())))
	e := &nodeEngine{t: t, w: nodewire.NewConn(c)}
	e.reply(e.send(&nodewire.Hello{Version: nodewire.Version, Engine: name}, -1), nodewire.TypeWelcome)
	return e
}

func (e *nodeEngine) send(m nodewire.Message, fd int) uint64 {
	e.t.Helper()
	e.next++
	require.NoError(e.t, e.w.WriteFrame(e.next, m, fd))
	return e.next
}

// reply reads the next frame: of type want, answering request.
func (e *nodeEngine) reply(request uint64, want nodewire.Type) nodewire.Message {
	e.t.Helper()
	h, m, fd, err := e.w.ReadFrame(1 << 24)
	require.NoError(e.t, err)
	require.Equal(e.t, -1, fd)
	require.Equalf(e.t, want, h.Type, "got %+v", m)
	require.Equal(e.t, request, h.Request)
	return m
}

// lend lends a sealed memfd of rows slots of slotBytes; it returns the
// lend's id and the engine's mapping of it.
func (e *nodeEngine) lend(slotBytes int64, rows int) (uint32, []byte) {
	e.t.Helper()
	size, err := nodewire.LendSize(slotBytes, rows, 1)
	require.NoError(e.t, err)
	fd, err := unix.MemfdCreate("kvshare-node-test", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	require.NoError(e.t, err)
	e.t.Cleanup(func() { unix.Close(fd) })
	require.NoError(e.t, unix.Ftruncate(fd, size))
	_, err = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW)
	require.NoError(e.t, err)
	mem, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	require.NoError(e.t, err)
	e.t.Cleanup(func() { unix.Munmap(mem) })
	req := e.send(&nodewire.Lend{SlotBytes: uint64(slotBytes), SlotCount: uint32(rows), Regions: 1}, fd)
	lent := e.reply(req, nodewire.TypeLent).(*nodewire.Lent)
	return lent.Lend, mem
}

// move publishes or fetches the rows into slots 0…n-1 of the lend, and
// returns each row's status once the attempt quiesced.
func (e *nodeEngine) move(dir contract.Direction, lend uint32, names [][]byte) []contract.RowStatus {
	e.t.Helper()
	slots := make([]uint32, len(names))
	for i := range slots {
		slots[i] = uint32(i)
	}
	req := e.send(&nodewire.Transfer{Dir: dir, Lend: lend, Groups: []nodewire.Group{{Slots: slots, Names: names}}}, -1)
	e.reply(req, nodewire.TypeAccepted)
	out := e.reply(req, nodewire.TypeOutcome).(*nodewire.Outcome)
	require.Empty(e.t, out.Fault)
	e.reply(req, nodewire.TypeQuiesced)
	return out.Rows
}

// roundTripThroughNode has one engine publish rows and another fetch
// them through the node at socket, every byte checked.
func roundTripThroughNode(t *testing.T, socket string) {
	const slotBytes, rows = 4096, 16
	names := make([][]byte, rows)
	for i := range names {
		names[i] = fmt.Appendf(nil, "%s/row-%d", t.Name(), i)
	}
	pub := attachNode(t, socket, "publisher")
	lendA, memA := pub.lend(slotBytes, rows)
	for i := range memA {
		memA[i] = byte(i*7 + i/slotBytes)
	}
	for _, s := range pub.move(contract.PutDir, lendA, names) {
		require.Equal(t, contract.Ready, s)
	}
	fet := attachNode(t, socket, "fetcher")
	lendB, memB := fet.lend(slotBytes, rows)
	for _, s := range fet.move(contract.GetDir, lendB, names) {
		require.Equal(t, contract.Ready, s)
	}
	require.Equal(t, memA, memB, "every fetched byte as published")
	for _, e := range []*nodeEngine{pub, fet} {
		lend := map[*nodeEngine]uint32{pub: lendA, fet: lendB}[e]
		e.reply(e.send(&nodewire.Return{Lend: lend}, -1), nodewire.TypeReturned)
	}
}

// TestNodeCommand: `kvshare node` serves the embedded store at the
// socket, with the mode asked; two engines round-trip through it; at
// the end of its context it shuts down with everything given back.
func TestNodeCommand(t *testing.T) {
	socket := nodeSocket(t)
	r, w := io.Pipe()
	var errs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		defer w.Close()
		code <- nodeCmd(ctx, []string{"--socket", socket, "--mode", "0660", "--capacity", "16MiB"}, w, &errs)
	}()
	line, rest := serving(t, r)
	require.Contains(t, line, "the embedded in-memory store")
	require.Contains(t, line, "mode 0660")
	fi, err := os.Stat(socket)
	require.NoError(t, err)
	require.Equal(t, os.ModeSocket|0o660, fi.Mode())

	roundTripThroughNode(t, socket)

	cancel()
	require.True(t, patience.For(t).Wait(closedWhen(code)), "the node did not shut down")
	require.Equal(t, 0, <-code, "stderr: %s", errs.String())
	require.Contains(t, rest(), "shut down after 2 sessions: 2 attempts")
	_, err = os.Lstat(socket)
	require.ErrorIs(t, err, os.ErrNotExist, "the socket is removed")
}

// closedWhen is a channel closed once c holds a value (left for the
// reader).
func closedWhen(c chan int) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		v := <-c
		c <- v
		close(done)
	}()
	return done
}

// TestNodeCommandStoreFile: with --store naming an embedded store's file
// ([memory], and [blob]), the node serves the store that file shapes.
func TestNodeCommandStoreFile(t *testing.T) {
	socket := nodeSocket(t)
	store := writeStore(t, "[blob]\nkey_prefix = \"nodeteam\"\n[memory]\ncapacity = 4194304\nworkers = 4\n")
	r, w := io.Pipe()
	var errs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		defer w.Close()
		code <- nodeCmd(ctx, []string{"--socket", socket, "--store", store}, w, &errs)
	}()
	line, rest := serving(t, r)
	require.Contains(t, line, "the embedded in-memory store (4 MiB taken up front")
	roundTripThroughNode(t, socket)
	cancel()
	require.True(t, patience.For(t).Wait(closedWhen(code)))
	require.Equal(t, 0, <-code, "stderr: %s", errs.String())
	require.Contains(t, rest(), "shut down after 2 sessions")
}

// TestNodeCommandSIGTERM: the command as its own process stops at
// SIGTERM, shutting the node down, exit status 0.
func TestNodeCommandSIGTERM(t *testing.T) {
	socket := nodeSocket(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestNodeCommandProcess$")
	cmd.Env = append(os.Environ(), "KVSHARE_NODE_ARGS=--socket "+socket+" --capacity 8MiB")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errs syncBuffer
	cmd.Stderr = &errs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	_, rest := serving(t, out)
	roundTripThroughNode(t, socket)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	require.True(t, patience.For(t).Wait(exited), "the node did not stop at SIGTERM")
	require.NoError(t, waitErr, "stderr: %s", errs.String())
	require.Contains(t, rest(), "shut down after 2 sessions")
}

// TestNodeCommandProcess is the node process of TestNodeCommandSIGTERM;
// run by itself it has nothing to do.
func TestNodeCommandProcess(t *testing.T) {
	args := os.Getenv("KVSHARE_NODE_ARGS")
	if args == "" {
		t.Skip("the node process of TestNodeCommandSIGTERM")
	}
	os.Exit(run(append([]string{"node"}, strings.Fields(args)...), os.Stdout, os.Stderr))
}

// TestNodeCommandUsage: flags that do not make a node are refused with
// exit status 2 and a line naming the flag.
func TestNodeCommandUsage(t *testing.T) {
	socket := nodeSocket(t)
	store := writeStore(t, "[memory]\ncapacity = 1048576\n")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--socket", ""}, "--socket PATH is required"},
		{[]string{"--socket", socket, "--mode", "rw"}, `--mode "rw"`},
		{[]string{"--socket", socket, "--mode", "01777"}, `--mode "01777"`},
		{[]string{"--socket", socket, "--allow-uid", "1000,bob"}, `--allow-uid: "bob"`},
		{[]string{"--socket", socket, "--capacity", "lots"}, "--capacity"},
		{[]string{"--socket", socket, "--max-lend-bytes", "0"}, "--max-lend-bytes"},
		{[]string{"--socket", socket, "--store", store, "--capacity", "1MiB"}, "--capacity shapes the embedded store"},
		{[]string{"--socket", socket, "extra"}, `unexpected argument "extra"`},
	} {
		var out, errs bytes.Buffer
		require.Equal(t, 2, run(append([]string{"node"}, c.args...), &out, &errs), "%v", c.args)
		require.Contains(t, errs.String(), c.msg, "%v", c.args)
	}
}

// TestNodeCommandTenants: `kvshare node --require-scope --tenant …`
// refuses a hello without a scope, and one declaring a tenant the spec
// does not give this uid; serves the tenant it does, up to its limit,
// refusing the lend beyond it naming the limit and the tenant.
func TestNodeCommandTenants(t *testing.T) {
	socket := nodeSocket(t)
	r, w := io.Pipe()
	var errs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		defer w.Close()
		code <- nodeCmd(ctx, []string{"--socket", socket, "--capacity", "16MiB", "--require-scope",
			"--tenant", fmt.Sprintf("uids=%d max_lent_bytes=4096 tenant=acme", os.Getuid())}, w, &errs)
	}()
	_, rest := serving(t, r)
	scope := keys.Scope{Model: "m", Revision: "r", KVDType: "fp16", TokensPerBlock: 16, KVHeads: 8, HeadDim: 128,
		Layers: 32, TPSize: 1, PPSize: 1, HashAlgorithm: "xxh3-128", Tenant: "globex"}
	hello := func(scope string) (*nodeEngine, nodewire.Message) {
		c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: socket, Net: "unix"})
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		require.NoError(t, c.SetDeadline(time.Now().Add(patience.Wait())))
		e := &nodeEngine{t: t, w: nodewire.NewConn(c)}
		req := e.send(&nodewire.Hello{Version: nodewire.Version, Engine: "e", Scope: scope}, -1)
		h, m, _, err := e.w.ReadFrame(1 << 24)
		require.NoError(t, err)
		require.Equal(t, req, h.Request)
		return e, m
	}
	refused := func(m nodewire.Message, code nodewire.Code, field string) {
		t.Helper()
		r, ok := m.(*nodewire.Refused)
		require.Truef(t, ok, "want refused, got %+v", m)
		assert.Equal(t, code, r.Code)
		assert.Equal(t, field, r.Field)
	}
	_, m := hello("")
	refused(m, nodewire.CodeScopeUnsupported, "hello.scope")
	text, err := scope.MarshalText()
	require.NoError(t, err)
	_, m = hello(string(text))
	refused(m, nodewire.CodeTenantNotAllowed, "hello.scope.tenant")
	scope.Tenant = "acme"
	text, err = scope.MarshalText()
	require.NoError(t, err)
	e, m := hello(string(text))
	require.IsType(t, &nodewire.Welcome{}, m)
	e.lend(4096, 1)
	fd, err := unix.MemfdCreate("over", unix.MFD_ALLOW_SEALING)
	require.NoError(t, err)
	defer unix.Close(fd)
	require.NoError(t, unix.Ftruncate(fd, 4096))
	_, err = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK)
	require.NoError(t, err)
	req := e.send(&nodewire.Lend{SlotBytes: 4096, SlotCount: 1, Regions: 1}, fd)
	over := e.reply(req, nodewire.TypeRefused).(*nodewire.Refused)
	assert.Equal(t, nodewire.CodeTenantLimit, over.Code)
	assert.Equal(t, "tenant.lent_bytes", over.Field)
	assert.Contains(t, over.Message, `tenant "acme"`)

	cancel()
	require.True(t, patience.For(t).Wait(closedWhen(code)), "the node did not shut down")
	require.Equal(t, 0, <-code, "stderr: %s", errs.String())
	rest()
}
