package nodeclient_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/patience"
)

// fakeNode is a node built from nodewire alone, for the client's tests:
// by default it serves honestly over an in-memory map (a publish copies
// each slot under its name, a fetch copies it back, a lookup says which
// names it holds), mapping each lend as the real node does; a test's
// hook answers any frame its own way first. Every frame it reads is
// also sent to its session's seen channel.
type fakeNode struct {
	t       testing.TB
	path    string
	ln      *net.UnixListener
	welcome nodewire.Welcome

	mu       sync.Mutex
	hook     func(s *fakeSession, f got) bool // answers a frame its own way first; true: handled
	store    map[string][]byte
	mapped   []*fakeLend // every lend mapped, in order
	sessions chan *fakeSession
	wg       sync.WaitGroup
}

// got is one frame the fake read.
type got struct {
	h  nodewire.Header
	m  nodewire.Message
	fd int
}

type fakeSession struct {
	n      *fakeNode
	conn   *nodewire.Conn
	seen   chan got
	lends  map[uint32]*fakeLend // only the session's goroutine touches it
	lastID uint32
	last   atomic.Uint64 // the request id of the last frame read
}

type fakeLend struct {
	mem    []byte
	stride int64
	g      nodewire.Lend
	inode  uint64
}

func startFakeNode(t testing.TB) *fakeNode {
	t.Helper()
	n, err := listenFakeNode(t.TempDir(), t)
	require.NoError(t, err)
	t.Cleanup(n.stop)
	return n
}

// listenFakeNode starts a fake node listening at node.sock in dir,
// reporting to t; t is nil for an example (then session and next, which
// are for tests, must not be used).
func listenFakeNode(dir string, t testing.TB) (*fakeNode, error) {
	path := filepath.Join(dir, "node.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	n := &fakeNode{
		t:    t,
		path: path,
		ln:   ln,
		welcome: nodewire.Welcome{Version: nodewire.Version, NodePID: uint32(unix.Getpid()), MaxFrame: 1 << 20,
			MaxAttempts: 16, MaxRows: 64, MaxLendBytes: 1 << 24},
		store:    make(map[string][]byte),
		sessions: make(chan *fakeSession, 16),
	}
	n.wg.Add(1)
	go n.accept()
	return n, nil
}

// stop closes the listener and waits for every session to end.
func (n *fakeNode) stop() {
	_ = n.ln.Close()
	n.wg.Wait()
}

// logf logs on the test, if there is one.
func (n *fakeNode) logf(format string, args ...any) {
	if n.t != nil {
		n.t.Logf(format, args...)
	}
}

func (n *fakeNode) accept() {
	defer n.wg.Done()
	for {
		c, err := n.ln.AcceptUnix()
		if err != nil {
			return
		}
		s := &fakeSession{n: n, conn: nodewire.NewConn(c), seen: make(chan got, 1024), lends: make(map[uint32]*fakeLend)}
		select {
		case n.sessions <- s:
		default: // nobody asks for sessions (an example)
		}
		n.wg.Add(1)
		go s.serve()
	}
}

// session returns the next session the fake accepted.
func (n *fakeNode) session(ctx context.Context) *fakeSession {
	n.t.Helper()
	select {
	case s := <-n.sessions:
		return s
	case <-ctx.Done():
		n.t.Fatalf("no session accepted: %v", ctx.Err())
		return nil
	}
}

func (s *fakeSession) serve() {
	defer s.n.wg.Done()
	defer s.conn.Close()
	defer func() {
		for _, l := range s.lends {
			_ = unix.Munmap(l.mem)
		}
		close(s.seen)
	}()
	for {
		h, m, fd, err := s.conn.ReadFrame(1 << 22)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.n.logf("fake node: read: %v", err)
			}
			return
		}
		f := got{h: h, m: m, fd: fd}
		s.last.Store(h.Request)
		s.seen <- f
		s.n.mu.Lock()
		hook := s.n.hook
		s.n.mu.Unlock()
		if hook != nil && hook(s, f) {
			continue
		}
		s.honest(f)
	}
}

// reply writes m as the answer to request req.
func (s *fakeSession) reply(req uint64, m nodewire.Message) {
	if err := s.conn.WriteFrame(req, m, -1); err != nil {
		s.n.logf("fake node: write %v: %v", m.Type(), err)
	}
}

// next returns the next frame the session read, of type t, skipping others.
func (s *fakeSession) next(ctx context.Context, t nodewire.Type) got {
	s.n.t.Helper()
	for {
		select {
		case f, ok := <-s.seen:
			if !ok {
				s.n.t.Fatalf("the session ended before a %v came", t)
			}
			if f.h.Type == t {
				return f
			}
		case <-ctx.Done():
			s.n.t.Fatalf("no %v came: %v", t, ctx.Err())
		}
	}
}

// honest answers f as a node over an in-memory store would.
func (s *fakeSession) honest(f got) {
	n := s.n
	switch m := f.m.(type) {
	case *nodewire.Hello:
		s.reply(f.h.Request, &n.welcome)
	case *nodewire.Lend:
		l, err := mapLend(f.fd, *m)
		_ = unix.Close(f.fd)
		if err != nil {
			s.reply(f.h.Request, &nodewire.Refused{Code: nodewire.CodeBadLend, Field: "lend.fd", Message: err.Error()})
			return
		}
		s.lastID++
		n.mu.Lock()
		n.mapped = append(n.mapped, l)
		n.mu.Unlock()
		s.lends[s.lastID] = l
		s.reply(f.h.Request, &nodewire.Lent{Lend: s.lastID, RegionStride: uint64(l.stride)})
	case *nodewire.Transfer:
		l, ok := s.lends[m.Lend]
		if !ok {
			s.reply(f.h.Request, &nodewire.Refused{Code: nodewire.CodeUnknownLend, Field: "publish.lend"})
			return
		}
		s.reply(f.h.Request, &nodewire.Accepted{})
		var rows []contract.RowStatus
		for _, g := range m.Groups {
			for i, slot := range g.Slots {
				off := int64(g.Region)*l.stride + int64(slot)*int64(l.g.SlotBytes)
				b := l.mem[off : off+int64(l.g.SlotBytes)]
				rows = append(rows, n.move(m.Dir, string(g.Names[i]), b))
			}
		}
		s.reply(f.h.Request, &nodewire.Outcome{Rows: rows})
		s.reply(f.h.Request, &nodewire.Quiesced{})
	case *nodewire.Lookup:
		p := &nodewire.Presence{}
		v := contract.View{}
		for _, g := range m.Groups {
			v.Groups = append(v.Groups, contract.Group{Names: g})
			for _, name := range g {
				n.mu.Lock()
				_, ok := n.store[string(name)]
				n.mu.Unlock()
				p.Rows = append(p.Rows, map[bool]contract.Presence{true: contract.Present, false: contract.Absent}[ok])
			}
		}
		p.Bound = uint32(v.PresentBound(p.Rows))
		s.reply(f.h.Request, p)
	case *nodewire.Return:
		l, ok := s.lends[m.Lend]
		if !ok {
			s.reply(f.h.Request, &nodewire.Refused{Code: nodewire.CodeUnknownLend, Field: "return.lend"})
			return
		}
		delete(s.lends, m.Lend)
		_ = unix.Munmap(l.mem)
		s.reply(f.h.Request, &nodewire.Returned{})
	case *nodewire.Stats:
		s.reply(f.h.Request, &nodewire.StatsReply{Engines: 1, Lends: uint64(len(s.lends))})
	}
}

// move copies one row between a slot and the store.
func (n *fakeNode) move(dir contract.Direction, name string, slot []byte) contract.RowStatus {
	n.mu.Lock()
	defer n.mu.Unlock()
	if dir == contract.PutDir {
		n.store[name] = append([]byte(nil), slot...)
		return contract.Ready
	}
	b, ok := n.store[name]
	if !ok {
		return contract.Miss
	}
	copy(slot, b)
	return contract.Ready
}

// mapLend checks a lent fd as the node does (sealed against shrinking,
// large enough) and maps it shared.
func mapLend(fd int, g nodewire.Lend) (*fakeLend, error) {
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil {
		return nil, err
	}
	if seals&unix.F_SEAL_SHRINK == 0 {
		return nil, errors.New("not sealed against shrinking")
	}
	size, err := nodewire.LendSize(int64(g.SlotBytes), int(g.SlotCount), int(g.Regions))
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Size < size {
		return nil, errors.New("smaller than its geometry")
	}
	mem, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	stride, _ := nodewire.Stride(int64(g.SlotBytes), int(g.SlotCount))
	return &fakeLend{mem: mem, stride: stride, g: g, inode: st.Ino}, nil
}

// bounded returns a context for one wait of test t, bounded by patience.
func bounded(t testing.TB) context.Context {
	ctx, cancel := patience.For(t).Context(t.Context())
	t.Cleanup(cancel)
	return ctx
}

// lastLend returns the last lend the fake mapped (its mem only while
// the client has not returned it).
func (n *fakeNode) lastLend() *fakeLend {
	n.mu.Lock()
	defer n.mu.Unlock()
	require.NotEmpty(n.t, n.mapped)
	return n.mapped[len(n.mapped)-1]
}

// mappings counts this process's mappings of the file of inode ino.
func mappings(t testing.TB, ino uint64) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 && strings.HasPrefix(f[5], "/memfd:kvshare-lend") && f[4] == strconv.FormatUint(ino, 10) {
			n++
		}
	}
	return n
}

// setHook sets the function that answers frames before the honest node.
func (n *fakeNode) setHook(hook func(s *fakeSession, f got) bool) {
	n.mu.Lock()
	n.hook = hook
	n.mu.Unlock()
}

// unmap unmaps a lend the fake mapped outside its sessions' maps.
func unmap(l *fakeLend) error { return unix.Munmap(l.mem) }

// lastRequest returns the request id of the last frame the session read.
func (s *fakeSession) lastRequest() uint64 { return s.last.Load() }

// ended waits for the session to end (its lends unmapped by then).
func (s *fakeSession) ended(ctx context.Context) {
	s.n.t.Helper()
	for {
		select {
		case _, ok := <-s.seen:
			if !ok {
				return
			}
		case <-ctx.Done():
			s.n.t.Fatalf("the session did not end: %v", ctx.Err())
		}
	}
}
