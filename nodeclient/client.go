package nodeclient

import (
	"context"
	"encoding"
	"fmt"
	"log/slog"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/kvshare/kvshare/nodewire"
)

// DefaultMaxFrame is the largest frame body the client reads from the
// node when Options.MaxFrame is 0: room for an outcome or a presence of
// millions of rows.
const DefaultMaxFrame = 16 << 20

// Options say who the engine is and how the client reads.
type Options struct {
	// Engine names the engine in the node's logs and counters: 1 to
	// nodewire.MaxEngineName bytes. Required.
	Engine string
	// Scope is the scope every key of the session is made under: the
	// hello carries its canonical text (MarshalText; module keys'
	// Scope is one). Engines attached under equal scopes share blocks;
	// under scopes that differ in any field they never meet on a key.
	// nil: no scope (the node's prefix alone), which a node may refuse
	// (nodewire.ErrScope). One session has one scope: an engine serving
	// several tenants or models dials once per scope.
	Scope encoding.TextMarshaler
	// MaxFrame caps the body of a frame the client reads from the node;
	// 0 means DefaultMaxFrame. A larger frame ends the connection.
	MaxFrame uint32
	// Logger receives what the client does on its own (a lend it returns
	// because nobody waited for it, memory it keeps); nil means
	// slog.Default().
	Logger *slog.Logger
	// ExitGrace is how long, when the connection ends without the node's
	// goodbye, the client waits for the node's process to exit before
	// forcing the outcomes still open, so that their faults can already
	// say NodeExited; 0 means DefaultExitGrace, a negative value not at
	// all. Proof that comes later is had from Client.WaitNodeExit.
	ExitGrace time.Duration
}

// Client is an engine's session with a node: one Unix stream socket, one
// goroutine reading the node's replies and handing each to its request,
// one writing the client's frames in order. All methods are safe for
// concurrent use; every one that waits for the node takes a context.
type Client struct {
	conn    *nodewire.Conn
	welcome nodewire.Welcome
	log     *slog.Logger
	maxRead uint32
	nextID  atomic.Uint64
	out     *outbox
	done    chan struct{} // closed when the connection has ended

	mu      sync.Mutex
	pending map[uint64]replyTo // requests whose replies may still come
	err     error              // why the connection ended, once done is closed
	goodbye *nodewire.NodeGoodbye
	closing bool
	lent    map[*memory]int64 // every lend's memory still mapped, and its bytes

	exitGrace time.Duration
	watch     *watch     // the node's pidfd, set once welcomed (read under mu: see watcher)
	exited    bool       // the node's exit is proven
	cutOff    []*Attempt // attempts the end of the connection cut off, until the exit is proven
	orphans   []*Lend    // lends cut off that no caller holds, freed once the exit is proven
}

// replyTo is what handles the replies of one request. deliver takes one
// frame of the node (the reader calls it, never under c.mu) and says
// whether the request is answered for good; an error is the node's
// breach of the protocol and ends the connection. lost is told, once,
// that the connection ended first.
type replyTo interface {
	deliver(m nodewire.Message) (final bool, err error)
	lost(err error)
}

// Dial connects to the node listening at socketPath, says hello and
// waits within ctx for the node's welcome. A node that refuses the hello
// answers with a *nodewire.RefusedError (nodewire.ErrNotAllowed,
// nodewire.ErrVersion, nodewire.ErrBadScope, nodewire.ErrScope,
// nodewire.ErrTenantNotAllowed, …); a node that speaks another version,
// with an error wrapping nodewire.ErrVersion.
func Dial(ctx context.Context, socketPath string, o Options) (*Client, error) {
	if n := len(o.Engine); n == 0 || n > nodewire.MaxEngineName {
		return nil, fmt.Errorf("%w: Options.Engine is %d bytes, want 1 to %d", nodewire.ErrProtocol, n, nodewire.MaxEngineName)
	}
	scope, err := scopeText(o.Scope)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	raw, err := d.DialContext(ctx, "unix", socketPath)
	if err != nil {
		return nil, fmt.Errorf("kvshare/nodeclient: dial %s: %w", socketPath, err)
	}
	c := &Client{
		conn:    nodewire.NewConn(raw.(*net.UnixConn)),
		log:     o.Logger,
		maxRead: o.MaxFrame,
		done:    make(chan struct{}),
		pending: make(map[uint64]replyTo),
		lent:    make(map[*memory]int64),

		exitGrace: o.ExitGrace,
		watch:     &watch{fd: -1, via: "no pidfd: the node did not welcome the client"},
	}
	if c.exitGrace == 0 {
		c.exitGrace = DefaultExitGrace
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.maxRead == 0 {
		c.maxRead = DefaultMaxFrame
	}
	c.out = newOutbox(c.conn)
	go c.write()
	go c.read()
	m, err := c.call(ctx, &nodewire.Hello{Version: nodewire.Version, Engine: o.Engine, Scope: scope}, -1, nil, nodewire.TypeWelcome)
	if err != nil {
		c.shut(fmt.Errorf("%w: the hello was not answered: %w", ErrClosed, err))
		return nil, fmt.Errorf("kvshare/nodeclient: hello to %s: %w", socketPath, err)
	}
	w := m.(*nodewire.Welcome)
	if w.Version != nodewire.Version {
		c.shut(fmt.Errorf("%w: the node speaks version %d", ErrClosed, w.Version))
		return nil, fmt.Errorf("%w: the node at %s speaks version %d, the client %d", nodewire.ErrVersion, socketPath, w.Version, nodewire.Version)
	}
	c.welcome = *w
	wt := watchPeer(raw.(*net.UnixConn), w.NodePID)
	c.mu.Lock()
	c.watch = wt
	c.mu.Unlock()
	if !wt.proves() {
		c.log.Info("kvshare/nodeclient: the node's exit cannot be proven: memory lent to it is kept for good if the connection ends", "socket", socketPath, "why", wt.via)
	}
	return c, nil
}

// scopeText is the hello's scope: the canonical text of o.Scope, or ""
// for none; one that cannot travel in the hello's str is refused with
// nodewire.ErrBadScope before anything is sent.
func scopeText(m encoding.TextMarshaler) (string, error) {
	if m == nil {
		return "", nil
	}
	text, err := m.MarshalText()
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: Options.Scope: %w", nodewire.ErrBadScope, err)
	case len(text) == 0:
		return "", fmt.Errorf("%w: Options.Scope encodes to nothing: leave it nil for no scope", nodewire.ErrBadScope)
	case len(text) > math.MaxUint16:
		return "", fmt.Errorf("%w: Options.Scope is %d bytes, the hello carries at most %d", nodewire.ErrBadScope, len(text), math.MaxUint16)
	case !utf8.Valid(text):
		return "", fmt.Errorf("%w: Options.Scope is not UTF-8", nodewire.ErrBadScope)
	}
	return string(text), nil
}

// Welcome returns the node's welcome: its version, pid and limits.
func (c *Client) Welcome() nodewire.Welcome { return c.welcome }

// Done returns a channel closed when the connection has ended (Close,
// the node's goodbye, a broken connection) and every attempt whose
// outcome had not come has it forced; Err then says why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended, wrapping [ErrClosed], or nil
// while it is open.
func (c *Client) Err() error {
	select {
	case <-c.done:
	default:
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Lent returns the lends whose memory the client maps now, and their
// bytes: lends in use, and lends it keeps because it cannot prove the
// node let go of them (a return answered Held, a lend whose connection
// ended before it was returned). Their memory is never unmapped.
func (c *Client) Lent() (lends int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.lent {
		lends++
		bytes += b
	}
	return lends, bytes
}

// Close says goodbye, waits within ctx for the goodbye to be written,
// and closes the connection. What the node still does for the engine
// runs on there: attempts not quiesced by then never quiesce for the
// client, and the memory of lends not returned stays mapped (Lent
// counts it). Return lends first to free them. Close after the
// connection ended does nothing and returns nil.
func (c *Client) Close(ctx context.Context) error {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return nil
	}
	c.closing = true
	c.mu.Unlock()
	flushed := make(chan struct{})
	c.out.post(frame{id: c.nextID.Add(1), m: &nodewire.ClientGoodbye{Reason: "closed by the engine"}, fd: -1, flushed: flushed})
	var err error
	select {
	case <-flushed:
	case <-c.done:
	case <-ctx.Done():
		err = fmt.Errorf("kvshare/nodeclient: close: the goodbye was not written: %w", ctx.Err())
	}
	c.shut(fmt.Errorf("%w: closed by the engine", ErrClosed))
	return err
}

// shut ends the connection with err (the first reason wins): the socket
// is closed, the reader sees the end and tells every request.
func (c *Client) shut(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
	_ = c.conn.Close()
	c.out.stop()
}

// request registers r under a new request id.
func (c *Client) request(r replyTo) (uint64, error) {
	id := c.nextID.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending == nil {
		return 0, c.err
	}
	if c.closing {
		return 0, fmt.Errorf("%w: closed by the engine", ErrClosed)
	}
	c.pending[id] = r
	return id, nil
}

// send encodes m and queues it for the writer.
func (c *Client) send(id uint64, m nodewire.Message, fd int, written func(bool)) {
	c.out.post(frame{id: id, m: encode(m), fd: fd, written: written})
}

// cancel asks the node to cancel attempt id; no reply comes.
func (c *Client) cancel(id uint64) {
	c.send(c.nextID.Add(1), &nodewire.Cancel{Attempt: id}, -1, nil)
}

// checkBody refuses a frame whose body the node would refuse for its
// size, before anything is sent.
func (c *Client) checkBody(m *encoded, what string) error {
	if n, max := len(m.body), int64(c.welcome.MaxFrame); int64(n) > max {
		return fmt.Errorf("%w: %s: a frame body of %d bytes, over the node's max_frame of %d", nodewire.ErrLimit, what, n, max)
	}
	return nil
}

// checkRows refuses a view of more rows than the node takes.
func (c *Client) checkRows(rows int, what string) error {
	if max := int64(c.welcome.MaxRows); int64(rows) > max {
		return fmt.Errorf("%w: %s: %d rows, over the node's max_rows of %d", nodewire.ErrLimit, what, rows, max)
	}
	return nil
}
