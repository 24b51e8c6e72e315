package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/patience"
)

// fixture is a node serving a socket over memdrv's bounded store, as
// the tests drive it: engines dial its path.
type fixture struct {
	t     *testing.T
	store *memdrv.Store
	drv   *memdrv.Driver
	node  *Node
	path  string
	// givesUpAtOnce: the node stops waiting for a lend's access as
	// soon as it starts (giveUpAtOnce), so even an honest return may
	// find the binding still finishing and answer Held.
	givesUpAtOnce bool
}

// quiet is the tests' logger: warnings only, to the test's log.
func quiet(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// newFixture starts a node over a fresh bounded store; shape changes the
// config first. The cleanup shuts the node down and checks that nothing
// of any engine's memory stayed mapped, then closes the driver and the
// store.
func newFixture(t *testing.T, shape func(*Config)) *fixture {
	t.Helper()
	store, err := memdrv.NewBoundedStore(memdrv.StoreOptions{Capacity: 16 << 20, ChunkBytes: 4096})
	require.NoError(t, err)
	// Workers enough for every row a test holds inside the store and
	// the honest round trip beside them: a held row keeps its worker.
	drv := memdrv.New(store, memdrv.Options{Workers: 8})
	dir, err := os.MkdirTemp("", "kvnode") // short: a socket path has a 108-byte cap
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	cfg := Config{Driver: drv, Socket: filepath.Join(dir, "node.sock"), Logger: quiet(t)}
	if shape != nil {
		shape(&cfg)
	}
	n, err := New(cfg)
	require.NoError(t, err)
	l, err := Listen(cfg.Socket, n.cfg.Mode)
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- n.Serve(context.Background(), l) }()
	f := &fixture{t: t, store: store, drv: drv, node: n, path: cfg.Socket, givesUpAtOnce: n.cfg.EngineWait < time.Second}
	t.Cleanup(func() {
		ctx, cancel := patience.For(t).Context(context.Background())
		defer cancel()
		held := n.Shutdown(ctx)
		require.Empty(t, held, "the node kept memory at shutdown")
		require.ErrorIs(t, <-served, ErrShutDown)
		require.True(t, drv.Drain(ctx))
		require.NoError(t, drv.Close())
		require.NoError(t, store.Close())
	})
	return f
}

// waitNode waits, within the tests' patience, until ok holds of the
// node's stats; it re-checks whenever an engine ends or a lend is
// unmapped, and when the node's counts change otherwise (poke).
func (f *fixture) waitNode(what string, ok func(Stats) bool) Stats {
	f.t.Helper()
	ctx, cancel := patience.For(f.t).Context(context.Background())
	defer cancel()
	for {
		f.node.mu.Lock()
		changed := f.node.changed
		f.node.mu.Unlock()
		s := f.node.Stats()
		if ok(s) {
			return s
		}
		select {
		case <-changed:
		case <-ctx.Done():
			f.t.Fatalf("waiting for %s: %v; stats %+v", what, ctx.Err(), s)
		}
	}
}

// peer is a test's engine: a raw connection to the node, frames written
// and read with nodewire directly.
type testEngine struct {
	t    *testing.T
	c    *net.UnixConn
	w    *nodewire.Conn
	mu   sync.Mutex
	next uint64
}

func (f *fixture) dial() *testEngine {
	f.t.Helper()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: f.path, Net: "unix"})
	require.NoError(f.t, err)
	e := &testEngine{t: f.t, c: c, w: nodewire.NewConn(c)}
	f.t.Cleanup(func() { _ = c.Close() })
	return e
}

// attach dials and says hello; it returns the welcome.
func (f *fixture) attach(name string) (*testEngine, *nodewire.Welcome) {
	f.t.Helper()
	e := f.dial()
	req := e.send(&nodewire.Hello{Version: nodewire.Version, Engine: name})
	w := expect[*nodewire.Welcome](e, req)
	return e, w
}

func (e *testEngine) request() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.next++
	return e.next
}

// send writes m as a new request and returns its id.
func (e *testEngine) send(m nodewire.Message) uint64 { return e.sendFD(m, -1) }

func (e *testEngine) sendFD(m nodewire.Message, fd int) uint64 {
	e.t.Helper()
	req := e.request()
	require.NoError(e.t, e.c.SetWriteDeadline(time.Now().Add(patience.Wait())))
	require.NoError(e.t, e.w.WriteFrame(req, m, fd))
	return req
}

// raw writes bytes as they are, with fds when given.
func (e *testEngine) raw(b []byte, fds ...int) {
	e.t.Helper()
	require.NoError(e.t, e.c.SetWriteDeadline(time.Now().Add(patience.Wait())))
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	_, _, err := e.c.WriteMsgUnix(b, oob, nil)
	require.NoError(e.t, err)
}

// read reads the next frame from the node within the tests' patience.
func (e *testEngine) read() (nodewire.Header, nodewire.Message, error) {
	if err := e.c.SetReadDeadline(time.Now().Add(patience.Wait())); err != nil {
		return nodewire.Header{}, nil, err
	}
	h, m, fd, err := e.w.ReadFrame(1 << 30)
	if fd >= 0 {
		_ = unix.Close(fd)
	}
	return h, m, err
}

// expect reads the next frame, which must be a T answering request.
func expect[T nodewire.Message](e *testEngine, request uint64) T {
	e.t.Helper()
	h, m, err := e.read()
	require.NoError(e.t, err)
	got, ok := m.(T)
	require.Truef(e.t, ok, "request %d: want a %T, got %v %+v", request, *new(T), h.Type, m)
	require.Equal(e.t, request, h.Request, "the reply's request id")
	return got
}

// expectRefused reads a refusal of request with code and field.
func (e *testEngine) expectRefused(request uint64, code nodewire.Code, field string) *nodewire.Refused {
	e.t.Helper()
	r := expect[*nodewire.Refused](e, request)
	require.Equalf(e.t, code, r.Code, "refusal %+v", r)
	require.Equalf(e.t, field, r.Field, "refusal %+v", r)
	require.NotEmpty(e.t, r.Message)
	return r
}

// expectGoodbye reads the node's goodbye with code, then the end of the
// stream.
func (e *testEngine) expectGoodbye(code nodewire.Code) *nodewire.NodeGoodbye {
	e.t.Helper()
	h, m, err := e.read()
	require.NoError(e.t, err)
	bye, ok := m.(*nodewire.NodeGoodbye)
	require.Truef(e.t, ok, "want the node's goodbye, got %v %+v", h.Type, m)
	require.Equalf(e.t, code, bye.Code, "goodbye %+v", bye)
	require.NotEmpty(e.t, bye.Reason)
	e.expectEnd()
	return bye
}

// expectEnd reads until the node closed the connection; nothing but the
// end may come.
func (e *testEngine) expectEnd() {
	e.t.Helper()
	h, m, err := e.read()
	if err == nil {
		e.t.Fatalf("want the end of the connection, got %v %+v", h.Type, m)
	}
	require.Truef(e.t, errors.Is(err, io.EOF) || errors.Is(err, unix.ECONNRESET), "want the end of the stream, got %v", err)
}

// memfd is a test engine's lent memory: a sealed memfd, mapped shared.
type memfd struct {
	name   string
	fd     int
	mem    []byte
	stride int64
	g      [3]int64 // slot bytes, slot count, regions
}

// newMemfd makes a memfd for the geometry, size bytes long (0: exactly
// the lend's size), sealed with seals, and maps it.
func newMemfd(t testing.TB, slotBytes int64, slotCount, regions int, size int64, seals int) *memfd {
	t.Helper()
	stride, err := nodewire.Stride(slotBytes, slotCount)
	require.NoError(t, err)
	if size == 0 {
		size = stride * int64(regions)
	}
	name := fmt.Sprintf("kvshare-test-%d", memfds.Add(1))
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	require.NoError(t, err)
	require.NoError(t, unix.Ftruncate(fd, size))
	if seals != 0 {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals)
		require.NoError(t, err)
	}
	m := &memfd{name: name, fd: fd, stride: stride, g: [3]int64{slotBytes, int64(slotCount), int64(regions)}}
	if size > 0 {
		m.mem, err = unix.Mmap(fd, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		if m.mem != nil {
			_ = unix.Munmap(m.mem)
		}
		_ = unix.Close(fd)
	})
	return m
}

// memfds numbers the tests' memfds, so each has a name of its own.
var memfds atomic.Int64

// mappings counts the mappings of the memfd in this process: the test
// engine's own, and the node's while it keeps the lend.
func (m *memfd) mappings(t testing.TB) int {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	return bytes.Count(maps, []byte("/memfd:"+m.name+" "))
}

// slot is the bytes of slot j of region i.
func (m *memfd) slot(i, j int) []byte {
	off := int64(i)*m.stride + int64(j)*m.g[0]
	return m.mem[off : off+m.g[0]]
}

// lendMsg is the lend frame of the memfd's geometry.
func (m *memfd) lendMsg() *nodewire.Lend {
	return &nodewire.Lend{SlotBytes: uint64(m.g[0]), SlotCount: uint32(m.g[1]), Regions: uint32(m.g[2])}
}

// lend lends a fresh sealed memfd of the geometry; it returns the lend's
// id and the memory.
func (e *testEngine) lend(slotBytes int64, slotCount, regions int) (uint32, *memfd) {
	e.t.Helper()
	m := newMemfd(e.t, slotBytes, slotCount, regions, 0, unix.F_SEAL_SHRINK)
	req := e.sendFD(m.lendMsg(), m.fd)
	lent := expect[*nodewire.Lent](e, req)
	require.Equal(e.t, uint64(m.stride), lent.RegionStride)
	return lent.Lend, m
}

// transfer sends a publish or fetch of one group and reads accepted.
func (e *testEngine) transfer(dir contract.Direction, lend uint32, region uint32, slots []uint32, names [][]byte) uint64 {
	e.t.Helper()
	req := e.send(&nodewire.Transfer{Dir: dir, Lend: lend, Groups: []nodewire.Group{{Region: region, Slots: slots, Names: names}}})
	expect[*nodewire.Accepted](e, req)
	return req
}

// settle reads an attempt's outcome and its quiescence.
func (e *testEngine) settle(req uint64) *nodewire.Outcome {
	e.t.Helper()
	out := expect[*nodewire.Outcome](e, req)
	expect[*nodewire.Quiesced](e, req)
	return out
}

// settleAll reads the outcomes and quiescences of attempts that run at
// once, in whatever order they come; each attempt's outcome must come
// before its quiescence.
func (e *testEngine) settleAll(reqs ...uint64) map[uint64]*nodewire.Outcome {
	e.t.Helper()
	outs := map[uint64]*nodewire.Outcome{}
	quiesced := map[uint64]bool{}
	for range 2 * len(reqs) {
		h, m, err := e.read()
		require.NoError(e.t, err)
		switch m := m.(type) {
		case *nodewire.Outcome:
			require.NotContains(e.t, outs, h.Request, "a second outcome")
			outs[h.Request] = m
		case *nodewire.Quiesced:
			require.Contains(e.t, outs, h.Request, "quiesced before its outcome")
			require.False(e.t, quiesced[h.Request], "quiesced twice")
			quiesced[h.Request] = true
		default:
			e.t.Fatalf("want outcomes and quiescences, got %v %+v", h.Type, m)
		}
	}
	for _, r := range reqs {
		require.True(e.t, quiesced[r], "attempt %d quiesced", r)
	}
	return outs
}

// names are n names unique to the test and tag.
func names(tag string, n int) [][]byte {
	ns := make([][]byte, n)
	for i := range ns {
		ns[i] = fmt.Appendf(nil, "%s/%d", tag, i)
	}
	return ns
}

// seq is 0, 1, … n-1 as slots.
func seq(n int) []uint32 {
	s := make([]uint32, n)
	for i := range s {
		s[i] = uint32(i)
	}
	return s
}

// roundTrip has one engine publish rows from its lend and a second fetch
// them into its own, every byte checked, and a lookup-only engine find
// them present: what every hostile case must leave working.
func (f *fixture) roundTrip(tag string) {
	f.t.Helper()
	const slotBytes, rows = 512, 8
	pub, _ := f.attach(tag + "-publisher")
	lendA, memA := pub.lend(slotBytes, rows, 1)
	ns := names(tag, rows)
	for j := range rows {
		b := memA.slot(0, j)
		for k := range b {
			b[k] = byte(j*31 + k + len(tag))
		}
	}
	out := pub.settle(pub.transfer(contract.PutDir, lendA, 0, seq(rows), ns))
	require.Empty(f.t, out.Fault)
	require.Equal(f.t, repeat(contract.Ready, rows), out.Rows)

	look, _ := f.attach(tag + "-router")
	req := look.send(&nodewire.Lookup{Every: true, Groups: [][][]byte{ns}})
	pres := expect[*nodewire.Presence](look, req)
	require.Equal(f.t, repeat(contract.Present, rows), pres.Rows)
	require.EqualValues(f.t, rows, pres.Bound)

	fet, _ := f.attach(tag + "-fetcher")
	lendB, memB := fet.lend(slotBytes, rows, 2)
	slots := seq(rows)
	for i, j := 0, len(slots)-1; i < j; i, j = i+1, j-1 {
		slots[i], slots[j] = slots[j], slots[i]
	}
	out = fet.settle(fet.transfer(contract.GetDir, lendB, 1, slots, ns))
	require.Empty(f.t, out.Fault)
	require.Equal(f.t, repeat(contract.Ready, rows), out.Rows)
	for r, s := range slots {
		require.Equal(f.t, memA.slot(0, r), memB.slot(1, int(s)), "row %d fetched into slot %d", r, s)
	}
	f.returnHonest(pub, tag+"-publisher", lendA)
	f.returnHonest(fet, tag+"-fetcher", lendB)
	for _, e := range []*testEngine{pub, look, fet} {
		e.send(&nodewire.ClientGoodbye{Reason: "done"})
		e.expectEnd()
	}
}

func repeat[T any](v T, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// key is the store key of name under the node's prefix.
func (f *fixture) key(name []byte) string {
	k, err := keys.Stem(f.node.stem).Key(name)
	require.NoError(f.t, err)
	return k
}

// returnHonest returns a lend with nothing in flight: Returned, the
// lend unmapped. Where the node gives up at once (giveUpAtOnce), the
// binding may still be finishing when the wait ends, on a loaded
// machine, so Held is accepted there too — and then the lend must
// still be unmapped, by the binding's own retirement, with nothing
// else done.
func (f *fixture) returnHonest(e *testEngine, engine string, lend uint32) {
	f.t.Helper()
	req := e.send(&nodewire.Return{Lend: lend})
	h, m, err := e.read()
	require.NoError(f.t, err)
	require.Equal(f.t, req, h.Request, "the reply's request id")
	switch m.(type) {
	case *nodewire.Returned:
		return
	case *nodewire.Held:
		require.Truef(f.t, f.givesUpAtOnce, "an honest return answered held: %+v", m)
		f.waitNode(engine+"'s honest lend unmapped", func(s Stats) bool {
			for _, es := range s.PerEngine {
				if es.Engine == engine {
					return es.Lends == 0
				}
			}
			return false
		})
	default:
		f.t.Fatalf("request %d: want returned (or held), got %v %+v", req, h.Type, m)
	}
}
