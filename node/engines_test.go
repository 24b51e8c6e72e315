package node

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/patience"
)

// The engines of these tests are processes of their own: the test
// binary run again with -test.run=^TestHelperEngine$ and the socket's
// path in the environment, as os/exec's tests run theirs. Each speaks
// to the node through nodeclient alone and takes commands, one a line,
// on its stdin; it answers each with one line on its stdout, "engine:
// ok …" or "engine: fail …" (then it exits 1).
const (
	envEngineSocket = "KVSHARE_TEST_ENGINE_SOCKET"
	envEngineName   = "KVSHARE_TEST_ENGINE_NAME"
	envEngineScope  = "KVSHARE_TEST_ENGINE_SCOPE" // the scope's canonical text; unset: none
)

// The geometry every helper engine lends: two regions of eight slots of
// 3000 bytes (one 4096-byte chunk of the store each, a region rounded up
// to 24576 bytes).
var engineGeometry = nodeclient.Geometry{SlotBytes: 3000, SlotCount: 8, Regions: 2}

// engineLendBytes is the size of a helper engine's lend.
func engineLendBytes(t testing.TB) int64 {
	n, err := nodewire.LendSize(engineGeometry.SlotBytes, engineGeometry.SlotCount, engineGeometry.Regions)
	require.NoError(t, err)
	return n
}

// rowBytes is the content of the row named name: bytes no other name
// has, so that a row fetched into the wrong slot, or torn, shows.
func rowBytes(name string, size int64) []byte {
	b := make([]byte, size)
	h := uint32(2166136261)
	for _, c := range []byte(name) {
		h = (h ^ uint32(c)) * 16777619
	}
	for i := range b {
		h ^= h << 13
		h ^= h >> 17
		h ^= h << 5
		b[i] = byte(h)
	}
	return b
}

// rowNames are the names of count rows tagged tag: "tag/0", "tag/1", ….
func rowNames(tag string, count int) [][]byte {
	ns := make([][]byte, count)
	for i := range ns {
		ns[i] = fmt.Appendf(nil, "%s/%d", tag, i)
	}
	return ns
}

// TestHelperEngine is not a test: it is a helper engine's process,
// started by the tests below; without the environment they set it
// skips.
func TestHelperEngine(t *testing.T) {
	socket := os.Getenv(envEngineSocket)
	if socket == "" {
		t.Skip("a helper engine's process, started by the engine tests")
	}
	err := runEngine(socket, os.Getenv(envEngineName), os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stdout, "engine: fail %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runEngine is a helper engine: it dials the node and runs the commands
// read from in until "close" or the end of in:
//
//	lend                          lend engineGeometry
//	publish TAG REGION COUNT      publish rows TAG/0… from slots 0… of REGION, wait for quiescence
//	fetch TAG REGION COUNT        look the rows up, fetch them into slots COUNT-1…0 of REGION, check every byte
//	probe TAG REGION COUNT        look the rows up and fetch them, whatever is there, into slots 0… of REGION
//	                              filled with 0xEE first: "probe present=P ready=R miss=M match=X untouched=U"
//	submit DIR TAG REGION SLOT    publish or fetch one row, waiting only for its acceptance
//	round N                       publish, look up and fetch back four rows "NAME/round-N", checked
//	return                        return the lend: "return returned", or "return held"
//	close                         say goodbye and exit
func runEngine(socket, name string, in io.Reader, out io.Writer) error {
	ctx := context.Background()
	bounded := func() (context.Context, context.CancelFunc) {
		return patience.Bound{Span: patience.Wait(), What: "engine " + name}.Context(ctx)
	}
	wctx, cancel := bounded()
	o := nodeclient.Options{Engine: name, Logger: slog.New(slog.DiscardHandler)}
	if scope := os.Getenv(envEngineScope); scope != "" {
		o.Scope = rawScope(scope)
	}
	c, err := nodeclient.Dial(wctx, socket, o)
	cancel()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "engine: ok dial pid %d\n", os.Getpid())
	var l *nodeclient.Lend
	var submitted []*nodeclient.Attempt // kept: the engine may not reuse their slots
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) == 0 {
			continue
		}
		wctx, cancel := bounded()
		var said string
		var err error
		switch f[0] {
		case "lend":
			l, err = c.Lend(wctx, engineGeometry)
			if err == nil {
				said = fmt.Sprintf("lend %d %d bytes", l.ID(), l.Bytes())
			}
		case "publish", "fetch":
			region, _ := strconv.Atoi(f[2])
			count, _ := strconv.Atoi(f[3])
			var rows int
			if f[0] == "publish" {
				rows, err = publishRows(wctx, l, f[1], region, count)
			} else {
				rows, err = fetchRows(wctx, c, l, f[1], region, count)
			}
			said = fmt.Sprintf("%s %d rows", f[0], rows)
		case "probe":
			region, _ := strconv.Atoi(f[2])
			count, _ := strconv.Atoi(f[3])
			said, err = probeRows(wctx, c, l, f[1], region, count)
		case "submit":
			region, _ := strconv.Atoi(f[3])
			slot, _ := strconv.Atoi(f[4])
			var a *nodeclient.Attempt
			a, err = submitRow(wctx, l, f[1], f[2], region, slot)
			if a != nil {
				submitted = append(submitted, a)
				said = "submit " + a.String()
			}
		case "round":
			tag := name + "/round-" + f[1]
			if _, err = publishRows(wctx, l, tag, 0, 4); err == nil {
				_, err = fetchRows(wctx, c, l, tag, 1, 4)
			}
			said = "round " + f[1]
		case "return":
			err = l.Return(wctx)
			said = "return returned"
			if errors.Is(err, nodeclient.ErrHeld) {
				err, said = nil, "return held" // the node keeps it: so does the client
			}
		case "close":
			err = c.Close(wctx)
			cancel()
			if err == nil {
				fmt.Fprintf(out, "engine: ok close (%d attempts submitted, their slots never reused)\n", len(submitted))
			}
			return err
		default:
			err = fmt.Errorf("unknown command %q", f[0])
		}
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w", lines.Text(), err)
		}
		fmt.Fprintf(out, "engine: ok %s\n", said)
	}
	return errors.Join(lines.Err(), c.Close(ctx))
}

// publishRows publishes count rows tagged tag from slots 0… of region,
// each filled with its bytes, and waits for their outcome (every row
// Ready) and quiescence.
func publishRows(ctx context.Context, l *nodeclient.Lend, tag string, region, count int) (int, error) {
	ns := rowNames(tag, count)
	g := contract.Group{Region: region, Names: ns}
	for i, n := range ns {
		copy(l.Slot(region, i), rowBytes(string(n), engineGeometry.SlotBytes))
		g.Slots = append(g.Slots, int32(i))
	}
	return settle(ctx, l.Publish, contract.View{Groups: []contract.Group{g}})
}

// fetchRows looks up count rows tagged tag (every one must be Present),
// fetches them into slots count-1…0 of region, and checks every byte.
func fetchRows(ctx context.Context, c *nodeclient.Client, l *nodeclient.Lend, tag string, region, count int) (int, error) {
	ns := rowNames(tag, count)
	found, err := c.Lookup(ctx, contract.View{Groups: []contract.Group{{Names: ns}}}, nodeclient.LookupOptions{Every: true})
	if err != nil {
		return 0, err
	}
	if found.Bound != count || slices.ContainsFunc(found.Rows, func(p contract.Presence) bool { return p != contract.Present }) {
		return 0, fmt.Errorf("lookup of %s: %v, bound %d", tag, found.Rows, found.Bound)
	}
	g := contract.Group{Region: region, Names: ns}
	for i := range ns {
		g.Slots = append(g.Slots, int32(count-1-i))
		clear(l.Slot(region, count-1-i))
	}
	rows, err := settle(ctx, l.Fetch, contract.View{Groups: []contract.Group{g}})
	if err != nil {
		return rows, err
	}
	for i, n := range ns {
		if got := l.Slot(region, count-1-i); !bytes.Equal(got, rowBytes(string(n), engineGeometry.SlotBytes)) {
			return rows, fmt.Errorf("row %s fetched into slot %d of region %d: its bytes differ", n, count-1-i, region)
		}
	}
	return rows, nil
}

// settle submits v and waits for its outcome, which must deliver every
// row, and its quiescence.
func settle(ctx context.Context, submit func(context.Context, contract.View, nodeclient.TransferOptions) (*nodeclient.Attempt, error), v contract.View) (int, error) {
	a, err := submit(ctx, v, nodeclient.TransferOptions{})
	if err != nil {
		return 0, err
	}
	o, err := a.Wait(ctx)
	if err != nil {
		return 0, err
	}
	if o.Fault != nil || o.Prefix() != v.Rows() {
		return o.Prefix(), fmt.Errorf("%v: rows %v, fault %v", a, o.Rows, o.Fault)
	}
	select {
	case <-a.Done():
	case <-ctx.Done():
		return v.Rows(), fmt.Errorf("%v did not quiesce: %w", a, ctx.Err())
	}
	return v.Rows(), nil
}

// submitRow publishes (dir "publish", the slot filled with the row's
// bytes) or fetches the row "tag/0" at slot of region, and waits only
// for the node to accept it.
func submitRow(ctx context.Context, l *nodeclient.Lend, dir, tag string, region, slot int) (*nodeclient.Attempt, error) {
	name := tag + "/0"
	v := contract.View{Groups: []contract.Group{{Region: region, Slots: []int32{int32(slot)}, Names: [][]byte{[]byte(name)}}}}
	if dir == "publish" {
		copy(l.Slot(region, slot), rowBytes(name, engineGeometry.SlotBytes))
		return l.Publish(ctx, v, nodeclient.TransferOptions{})
	}
	return l.Fetch(ctx, v, nodeclient.TransferOptions{})
}

// engineProc is a helper engine's process, as a test drives it.
type engineProc struct {
	t       *testing.T
	name    string
	cmd     *exec.Cmd
	in      io.WriteCloser
	lines   chan string   // its stdout, a line at a time; closed at its end
	exited  chan struct{} // closed once it exited and was waited for
	err     error         // Wait's, once exited is closed
	waiting sync.Once
	stderr  lockedBuffer
}

// startEngine starts a helper engine named name attached to the
// fixture's node, and waits for it to dial.
func (f *fixture) startEngine(name string) *engineProc {
	f.t.Helper()
	p := launchEngine(f.t, f.path, name)
	p.expect("ok dial")
	return p
}

// launchEngine starts a helper engine named name attached to the node
// at socket, with env added to its environment; the caller reads its
// first answer (the dial's).
func launchEngine(t *testing.T, socket, name string, env ...string) *engineProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperEngine$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), envEngineSocket+"="+socket, envEngineName+"="+name), env...)
	p := &engineProc{t: t, name: name, cmd: cmd, lines: make(chan string, 64), exited: make(chan struct{})}
	cmd.Stderr = &p.stderr
	var err error
	p.in, err = cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	go func() {
		defer close(p.lines)
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			p.lines <- s.Text()
		}
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill() // a test that failed half way
		}
		_ = p.wait()
		if t.Failed() {
			t.Logf("engine %s's stderr:\n%s", name, p.stderr.String())
		}
	})
	return p
}

// do sends the engine a command and returns its answer, which must be
// ok ("ok" itself left off).
func (p *engineProc) do(command string) string {
	p.t.Helper()
	_, err := io.WriteString(p.in, command+"\n")
	require.NoError(p.t, err, "engine %s: %s", p.name, command)
	return p.expect("ok " + strings.Fields(command)[0])
}

// expect waits within the tests' patience for the engine's next answer,
// which must start with want; it returns the answer past "ok ".
func (p *engineProc) expect(want string) string {
	p.t.Helper()
	ctx, cancel := patience.For(p.t).Context(context.Background())
	defer cancel()
	select {
	case line, ok := <-p.lines:
		require.True(p.t, ok, "engine %s ended before answering %q; stderr:\n%s", p.name, want, p.stderr.String())
		require.True(p.t, strings.HasPrefix(line, "engine: "+want), "engine %s answered %q, want %q", p.name, line, want)
		return strings.TrimPrefix(line, "engine: ok ")
	case <-ctx.Done():
		p.t.Fatalf("engine %s did not answer %q: %v", p.name, want, ctx.Err())
		return ""
	}
}

// wait waits for the engine to exit, within the tests' patience, and
// returns how it exited.
func (p *engineProc) wait() error {
	p.t.Helper()
	p.waiting.Do(func() {
		go func() {
			p.err = p.cmd.Wait()
			close(p.exited)
		}()
	})
	if !patience.For(p.t).Wait(p.exited) {
		p.t.Fatalf("engine %s did not exit", p.name)
	}
	return p.err
}

// lockedBuffer is a bytes.Buffer safe for a writer and a reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestEnginesInProcesses: two engine processes attach to one node, each
// lends, publishes rows from its slots, looks up and fetches both its
// own rows and the other's, every byte checked in the engine, and
// returns its lend; the store holds each row's bytes, and the node's
// lent bytes come back to none.
func TestEnginesInProcesses(t *testing.T) {
	f := newFixture(t, nil)
	a := f.startEngine("engine-a")
	b := f.startEngine("engine-b")
	lend := engineLendBytes(t)
	for _, e := range []*engineProc{a, b} {
		require.Equal(t, fmt.Sprintf("lend 1 %d bytes", lend), e.do("lend"))
	}
	s := f.node.Stats()
	require.EqualValues(t, 2, s.Engines)
	require.Equal(t, 2*lend, s.LentBytes)
	pids := []int32{}
	for _, pe := range s.PerEngine {
		pids = append(pids, pe.PID)
	}
	require.ElementsMatch(t, []int32{int32(a.cmd.Process.Pid), int32(b.cmd.Process.Pid)}, pids, "the node's engines are the two processes")

	require.Equal(t, "publish 8 rows", a.do("publish a 0 8"))
	require.Equal(t, "publish 8 rows", b.do("publish b 1 8"))
	for _, n := range rowNames("a", 8) {
		got, ok := f.store.Object(f.key(n))
		require.True(t, ok, "row %s in the store", n)
		require.Equal(t, rowBytes(string(n), engineGeometry.SlotBytes), got, "row %s's bytes in the store", n)
	}
	// Each fetches the other's rows and its own, into the other region.
	require.Equal(t, "fetch 8 rows", a.do("fetch b 1 8"))
	require.Equal(t, "fetch 8 rows", b.do("fetch a 0 8"))
	require.Equal(t, "fetch 8 rows", a.do("fetch a 1 8"))
	require.Equal(t, "fetch 8 rows", b.do("fetch b 0 8"))

	s = f.node.Stats()
	require.EqualValues(t, 6, s.Attempts)
	require.EqualValues(t, 6*8, s.Rows[contract.Ready])
	require.EqualValues(t, 4, s.Lookups)
	require.EqualValues(t, 4*8, s.LookupPresent)
	for _, e := range []*engineProc{a, b} {
		require.Equal(t, "return returned", e.do("return"))
		e.do("close")
		require.NoError(t, e.wait(), "engine %s exits cleanly", e.name)
	}
	s = f.waitNode("both engines gone", func(s Stats) bool { return s.Engines == 0 })
	require.Zero(t, s.LentBytes)
	require.Zero(t, s.Lends)
	require.Zero(t, s.AttemptsOpen)
}
