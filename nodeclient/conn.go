package nodeclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"syscall"

	"github.com/kvshare/kvshare/nodewire"
)

// encoded is a message whose body was encoded by the goroutine that
// sent it: the writer only copies bytes, and the caller's slices (a
// view's names) are not read after the call returns.
type encoded struct {
	t    nodewire.Type
	body []byte
}

func encode(m nodewire.Message) *encoded {
	if e, ok := m.(*encoded); ok {
		return e
	}
	return &encoded{t: m.Type(), body: m.AppendBody(nil)}
}

func (e *encoded) Type() nodewire.Type          { return e.t }
func (e *encoded) AppendBody(dst []byte) []byte { return append(dst, e.body...) }

// frame is one frame to send. written, if set, is told once, as the
// frame's write starts (true: from then on some of it, the fd included,
// may reach the node) or when it is dropped unsent (false). flushed, if
// set, is closed once the frame was written whole. rest, when set, is
// what a write begun at once left unwritten of the frame.
type frame struct {
	id      uint64
	m       nodewire.Message
	fd      int
	written func(tried bool)
	flushed chan struct{}
	rest    []byte
}

// frameWriter is the connection as the outbox writes it.
type frameWriter interface {
	WriteFrame(request uint64, m nodewire.Message, fd int) error
	TryWriteFrame(request uint64, m nodewire.Message) (rest []byte, err error)
	WriteRest(rest []byte) error
}

// outbox sends the client's frames in order, and posting never blocks,
// so that Cancel and the reader's own requests never wait on a node that
// is slow to read. When nothing is queued or being written, the poster
// writes its frame (one that carries no fd) at once, with one write the
// socket takes without waiting: a submission reaches the node with no
// hand-off to another goroutine. What the socket does not take, and
// every frame posted while another is queued or being written, waits
// for the writer goroutine (Client.write), in order.
type outbox struct {
	w       frameWriter
	mu      sync.Mutex
	q       []frame
	writing bool          // a write is under way, the writer's or a poster's
	stopped bool          // stop was called, or a write failed
	err     error         // the first failed write, for the writer to report
	wake    chan struct{} // one token: the queue may be non-empty, or the outbox stopped
}

func newOutbox(w frameWriter) *outbox { return &outbox{w: w, wake: make(chan struct{}, 1)} }

// post sends f, at once or through the queue; after stop, f is dropped
// unsent at once.
func (o *outbox) post(f frame) {
	o.mu.Lock()
	if o.stopped {
		o.mu.Unlock()
		if f.written != nil {
			f.written(false)
		}
		return
	}
	if o.writing || len(o.q) > 0 || f.fd >= 0 {
		o.q = append(o.q, f)
		o.mu.Unlock()
		o.signal()
		return
	}
	o.writing = true
	o.mu.Unlock()
	if f.written != nil {
		f.written(true)
	}
	rest, err := o.w.TryWriteFrame(f.id, f.m)
	o.mu.Lock()
	o.writing = false
	switch {
	case err != nil:
		if o.err == nil {
			o.err = fmt.Errorf("writing a %v: %w", f.m.Type(), err)
		}
		o.stopped = true
	case rest != nil:
		// The rest goes first: the frames queued meanwhile follow it.
		f.rest, f.written = rest, nil
		o.q = append([]frame{f}, o.q...)
	case f.flushed != nil:
		close(f.flushed)
	}
	if len(o.q) > 0 || o.stopped {
		o.signal() // the writer has work, or must stop: nothing else wakes it
	}
	o.mu.Unlock()
}

func (o *outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// stop drops what is queued, unsent, and every later post.
func (o *outbox) stop() {
	o.mu.Lock()
	q := o.q
	o.q, o.stopped = nil, true
	o.mu.Unlock()
	for _, f := range q {
		if f.written != nil {
			f.written(false)
		}
	}
	o.signal()
}

// next waits until no write is under way and a frame is queued, takes it
// and marks a write under way (done ends it); false, with a failed
// write's error if any, once stopped.
func (o *outbox) next() (frame, bool, error) {
	for {
		o.mu.Lock()
		if o.stopped {
			err := o.err
			o.mu.Unlock()
			return frame{}, false, err
		}
		if !o.writing && len(o.q) > 0 {
			f := o.q[0]
			o.q[0] = frame{}
			o.q = o.q[1:]
			o.writing = true
			o.mu.Unlock()
			return f, true, nil
		}
		o.mu.Unlock()
		<-o.wake
	}
}

// done ends the writer's write.
func (o *outbox) done() {
	o.mu.Lock()
	o.writing = false
	o.mu.Unlock()
}

// write sends the outbox's frames in order until it stops or a write
// fails (which ends the connection: a frame may be half sent).
func (c *Client) write() {
	for {
		f, ok, err := c.out.next()
		if err != nil {
			c.shut(fmt.Errorf("%w: %w", ErrClosed, err))
		}
		if !ok {
			return
		}
		if f.written != nil {
			f.written(true)
		}
		if f.rest != nil {
			err = c.conn.WriteRest(f.rest)
		} else {
			err = c.conn.WriteFrame(f.id, f.m, f.fd)
		}
		c.out.done()
		if err == nil && f.flushed != nil {
			close(f.flushed)
		}
		if err != nil {
			c.shut(fmt.Errorf("%w: writing a %v: %w", ErrClosed, f.m.Type(), err))
			return
		}
	}
}

// read reads the node's frames and hands each to its request until the
// connection ends; then it tells every request still pending (forcing
// the outcome of every attempt not known), and only then closes done.
func (c *Client) read() {
	err := c.readLoop()
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	if g := c.goodbye; g != nil && !errors.Is(c.err, g.Code.Err()) {
		c.err = fmt.Errorf("%w (the node said goodbye: %w: %q; it holds %d bytes of %d lends of this engine)",
			c.err, g.Code.Err(), g.Reason, g.HeldBytes, g.HeldLends)
	}
	// Only an end nobody announced looks like a crash: no goodbye of
	// the node, no Close of the engine, no breach of the protocol.
	crashLike := c.goodbye == nil && !c.closing && !errors.Is(c.err, nodewire.ErrProtocol)
	why := c.err
	c.mu.Unlock()
	_ = c.conn.Close()
	c.out.stop()
	lost := c.lostError(why, crashLike) // may wait the exit grace, with nothing locked
	c.mu.Lock()
	c.err = lost
	pending := c.pending
	c.pending = nil // no request is taken from now on
	c.mu.Unlock()
	for _, r := range pending {
		r.lost(lost)
	}
	if lost.Evidence == NodeExited {
		c.proven()
	} else {
		c.letGoOfWatch()
	}
	close(c.done)
}

// letGoOfWatch closes the node's pidfd at the end of the connection
// when the client keeps nothing the node's exit would free.
func (c *Client) letGoOfWatch() {
	c.mu.Lock()
	keep := len(c.lent) > 0 || len(c.cutOff) > 0
	w := c.watch
	c.mu.Unlock()
	if !keep {
		w.close(false)
	}
}

// readLoop returns why reading ended, wrapping ErrClosed.
func (c *Client) readLoop() error {
	for {
		h, m, fd, err := c.conn.ReadFrame(c.maxRead)
		if fd >= 0 {
			_ = syscall.Close(fd) // never sent by a node: ReadFrame already refused the frame
		}
		switch {
		case errors.Is(err, io.EOF):
			return fmt.Errorf("%w: the node closed the connection", ErrClosed)
		case errors.Is(err, net.ErrClosed):
			return fmt.Errorf("%w: the connection was closed", ErrClosed)
		case err != nil:
			return fmt.Errorf("%w: reading from the node: %w", ErrClosed, err)
		}
		if g, ok := m.(*nodewire.NodeGoodbye); ok {
			c.mu.Lock()
			c.goodbye = g
			c.mu.Unlock()
			continue // the node closes next
		}
		if !h.Type.FromNode() {
			return fmt.Errorf("%w: %w: the node sent a %v, a frame only an engine sends", ErrClosed, nodewire.ErrProtocol, h.Type)
		}
		c.mu.Lock()
		r, ok := c.pending[h.Request]
		c.mu.Unlock()
		if !ok {
			return fmt.Errorf("%w: %w: a %v for request %d, which awaits no reply", ErrClosed, nodewire.ErrProtocol, h.Type, h.Request)
		}
		final, err := r.deliver(m)
		if err != nil {
			return fmt.Errorf("%w: %w: request %d: %w", ErrClosed, nodewire.ErrProtocol, h.Request, err)
		}
		if final {
			c.mu.Lock()
			delete(c.pending, h.Request)
			c.mu.Unlock()
		}
	}
}

// call is a request answered by one frame: one of want, or Refused.
// Its waiter may give up (its context ended); a reply that comes after
// goes to orphan, which then owns what the request did.
type call struct {
	c      *Client
	want   []nodewire.Type
	reply  chan nodewire.Message // one reply, or nil when the connection ended first
	orphan func(m nodewire.Message, lostErr error)

	mu        sync.Mutex
	abandoned bool
	answered  bool
}

func (k *call) deliver(m nodewire.Message) (bool, error) {
	if t := m.Type(); t != nodewire.TypeRefused && !slices.Contains(k.want, t) {
		return true, fmt.Errorf("a %v answers a request that wants %v", t, k.want)
	}
	k.mu.Lock()
	k.answered = true
	abandoned := k.abandoned
	k.mu.Unlock()
	if abandoned {
		if k.orphan != nil {
			k.orphan(m, nil)
		}
		return true, nil
	}
	k.reply <- m
	return true, nil
}

func (k *call) lost(err error) {
	k.mu.Lock()
	k.answered = true
	abandoned := k.abandoned
	k.mu.Unlock()
	if abandoned {
		if k.orphan != nil {
			k.orphan(nil, err)
		}
		return
	}
	k.reply <- nil
}

// call sends m (with fd, for a lend) and waits within ctx for its reply:
// one of want, or the node's refusal as a *nodewire.RefusedError. If ctx
// ends first, a reply that comes later goes to orphan (nil: dropped);
// written, if set, is told whether m was sent.
func (c *Client) call(ctx context.Context, m nodewire.Message, fd int, orphan func(nodewire.Message, error), want ...nodewire.Type) (nodewire.Message, error) {
	return c.callWritten(ctx, m, fd, orphan, nil, want...)
}

func (c *Client) callWritten(ctx context.Context, m nodewire.Message, fd int, orphan func(nodewire.Message, error), written func(bool), want ...nodewire.Type) (nodewire.Message, error) {
	k := &call{c: c, want: want, reply: make(chan nodewire.Message, 1), orphan: orphan}
	id, err := c.request(k)
	if err != nil {
		if written != nil {
			written(false)
		}
		return nil, err
	}
	c.send(id, m, fd, written)
	select {
	case r := <-k.reply:
		return c.answer(r)
	case <-ctx.Done():
	}
	k.mu.Lock()
	if !k.answered {
		k.abandoned = true
		k.mu.Unlock()
		return nil, fmt.Errorf("kvshare/nodeclient: %v: no answer: %w", m.Type(), ctx.Err())
	}
	k.mu.Unlock()
	return c.answer(<-k.reply) // answered as ctx ended: the answer wins
}

// answer turns a call's reply into its result.
func (c *Client) answer(r nodewire.Message) (nodewire.Message, error) {
	if r == nil { // the connection ended
		c.mu.Lock()
		defer c.mu.Unlock()
		return nil, c.err
	}
	if ref, ok := r.(*nodewire.Refused); ok {
		return nil, ref.Err()
	}
	return r, nil
}
