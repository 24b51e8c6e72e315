package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodewire"
)

// engine is one session: an engine attached over one connection, from
// the accept to the goodbye. Its reader goroutine (serve) handles the
// requests in order; a reply leaves from the goroutine that posts it when
// the socket takes it at once, else its writer goroutine writes it; a
// goroutine per attempt in flight watches it, and one per lookup and
// per return runs it.
type engine struct {
	n       *Node
	session uint64
	conn    *net.UnixConn
	wire    *nodewire.Conn
	peer    peer
	out     *outbox
	tally   tally

	ctx    context.Context // the session's life: cancelled as it ends
	cancel context.CancelFunc
	work   sync.WaitGroup // watchers, lookups and returns

	log    *slog.Logger
	finder *lookups     // the engine's lookups, over a view of its own; set at the welcome
	scope  sessionScope // every key of the session is made under it; set at the welcome

	mu        sync.Mutex
	welcomed  bool
	name      string // the hello's
	tenant    string // its scope's, admitted by the node's configuration; set at the welcome
	lends     map[uint32]*lend
	nextLend  uint32
	transfers map[uint64]*transfer // by request id: attempts not quiesced
	lookupsIn int                  // lookups in flight
	lent      int64                // bytes of its lends mapped now (kept ones included)
	ending    bool                 // no new work
	stopCode  nodewire.Code        // why the node stops the session (0: it does not)
	stopWhy   string
}

func (e *engine) String() string {
	if name := e.nameOf(); name != "" {
		return fmt.Sprintf("engine %s (session %d)", name, e.session)
	}
	return fmt.Sprintf("session %d (%v)", e.session, e.peer)
}

func (e *engine) nameOf() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.name
}

func (e *engine) isWelcomed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.welcomed
}

// attach serves one accepted connection: the peer's credentials first,
// then the session.
func (n *Node) attach(c *net.UnixConn) {
	p, err := peerOf(c)
	if err != nil {
		n.log.Warn("kvshare/node: connection refused: no peer credentials", "err", err)
		_ = c.Close()
		return
	}
	wire := nodewire.NewConn(c)
	if !allowed(n.cfg.AllowUIDs, p.uid) {
		n.mu.Lock()
		n.refusedPeers++
		n.mu.Unlock()
		n.log.Warn("kvshare/node: peer refused: uid not allowed", "pid", p.pid, "uid", p.uid)
		// Nothing was read: a refused frame answers a request, so the
		// goodbye (request 0) carries the code.
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_ = wire.WriteFrame(0, &nodewire.NodeGoodbye{Code: nodewire.CodeNotAllowed,
			Reason: fmt.Sprintf("peer.uid: uid %d is not on the node's allow-list", p.uid)}, -1)
		lingerClose(c)
		_ = wire.Close()
		return
	}
	n.newEngine(c, wire, p).serve()
}

// newEngine makes the session of an accepted connection, counted among
// the node's engines.
func (n *Node) newEngine(c *net.UnixConn, wire *nodewire.Conn, p peer) *engine {
	ctx, cancel := context.WithCancel(context.Background())
	e := &engine{
		n:         n,
		conn:      c,
		wire:      wire,
		peer:      p,
		out:       newOutbox(n.cfg.OutQueue, wire),
		ctx:       ctx,
		cancel:    cancel,
		lends:     map[uint32]*lend{},
		transfers: map[uint64]*transfer{},
	}
	n.mu.Lock()
	n.sessions++
	e.session = n.sessions
	n.engines[e] = struct{}{}
	shutting := n.shutting
	n.mu.Unlock()
	e.log = n.log.With("session", e.session, "pid", p.pid, "uid", p.uid)
	if shutting {
		e.stop(nodewire.CodeShuttingDown, "the node is shutting down")
	}
	return e
}

// serve runs the session: the writer, then the requests in order until
// the connection ends or the node stops it, then the end.
func (e *engine) serve() {
	written := e.startWriter()
	code, why := e.read()
	e.end(code, why, written)
}

// startWriter starts the goroutine that writes the outbox; the channel
// closes when it is done.
func (e *engine) startWriter() <-chan struct{} {
	written := make(chan struct{})
	go func() {
		defer close(written)
		if err := e.out.run(); err != nil && !errors.Is(err, net.ErrClosed) {
			e.log.Debug("kvshare/node: write failed", "err", err)
		}
	}()
	return written
}

// read handles requests until the session ends, and returns why: code
// 0 when the engine ended it (its goodbye, or the end of the stream),
// else the code of the goodbye the node sends.
func (e *engine) read() (nodewire.Code, string) {
	for {
		h, m, fd, err := e.wire.ReadFrame(e.n.cfg.MaxFrame)
		if code, why, stopped := e.stopped(); stopped {
			closeFD(fd)
			return code, why
		}
		if err != nil {
			return e.readFailed(err)
		}
		if code, why, end := e.handle(h, m, fd); end {
			return code, why
		}
	}
}

// readFailed says how a failed read ends the session.
func (e *engine) readFailed(err error) (nodewire.Code, string) {
	if errors.Is(err, io.EOF) {
		return 0, "the engine closed the connection"
	}
	if e.out.slow() {
		return nodewire.CodeSlowReader, "the engine stopped reading its replies"
	}
	if code := nodewire.CodeOf(err); code != 0 {
		return code, err.Error()
	}
	if errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) {
		return 0, "the connection closed"
	}
	return 0, fmt.Sprintf("the connection failed: %v", err)
}

// stop ends the session from another goroutine (shutdown): the reader
// stops at once, and the session ends with a goodbye of code.
func (e *engine) stop(code nodewire.Code, why string) {
	e.mu.Lock()
	if e.stopCode == 0 {
		e.stopCode, e.stopWhy = code, why
	}
	e.mu.Unlock()
	_ = e.conn.SetReadDeadline(time.Now())
}

func (e *engine) stopped() (nodewire.Code, string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stopCode, e.stopWhy, e.stopCode != 0
}

// post queues a frame for the engine. An engine that lets its queue
// fill is disconnected: its connection closes, which ends the reader.
func (e *engine) post(request uint64, m nodewire.Message) {
	if e.out.post(request, m) || !e.out.slow() {
		return
	}
	e.mu.Lock()
	first := e.stopCode == 0
	if first {
		e.stopCode, e.stopWhy = nodewire.CodeSlowReader, "the engine stopped reading its replies"
	}
	e.mu.Unlock()
	if first {
		e.log.Warn("kvshare/node: engine disconnected: it stopped reading its replies", "queue", e.n.cfg.OutQueue)
	}
	_ = e.conn.Close() // a write blocked on the full socket returns; the reader stops
}

// refuse answers request with r and counts it.
func (e *engine) refuse(request uint64, r *refusal) {
	e.count(refused(r.code))
	if r.reclaiming {
		e.count(func(c *Counts) { c.ReclaimRefused++ })
	}
	e.log.Debug("kvshare/node: request refused", "request", request, "code", r.code, "field", r.field, "why", r.message)
	e.post(request, r.frame())
}

// count applies f to the engine's counts and the node's.
func (e *engine) count(f func(*Counts)) {
	e.tally.add(f)
	e.n.tally.add(f)
}

// stats returns the engine's counts; false before its welcome.
func (e *engine) stats() (EngineStats, bool) {
	if !e.isWelcomed() {
		return EngineStats{}, false
	}
	var digest string
	if d, ok := e.scope.stem.Scope(); ok {
		digest = d.String()
	}
	return EngineStats{Session: e.session, Engine: e.nameOf(), PID: e.peer.pid, UID: e.peer.uid,
		Scope: digest, Tenant: e.scope.tenant, Counts: e.tally.snapshot()}, true
}

func closeFD(fd int) {
	if fd >= 0 {
		_ = closeFile(fd)
	}
}

// rowsOf counts a transfer's rows.
func rowsOf(groups []nodewire.Group) int {
	n := 0
	for _, g := range groups {
		n += len(g.Slots)
	}
	return n
}

// statusCounts counts rows by status into c.
func statusCounts(rows []contract.RowStatus) func(*Counts) {
	return func(c *Counts) {
		for _, s := range rows {
			if s < contract.RowStatusCount {
				c.Rows[s]++
			}
		}
	}
}
