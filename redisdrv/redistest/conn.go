package redistest

import (
	"bufio"
	"net"
	"sync"
)

// connBuffer is the size of each connection's read and write buffers.
const connBuffer = 64 << 10

// entry is one client command in a connection's FIFO: forwarded (its
// reply comes from the server), answered by the proxy, or a crash.
type entry struct {
	rec   [][]byte // the command, as record keeps it
	reply []byte   // the proxy's own reply (FailOn); nil: forwarded
	crash bool     // close the connection abruptly here (CrashOn)
}

// heldReply is the reply a Hold holds on a connection.
type heldReply struct {
	hold *Hold
	rec  [][]byte
}

// serverMsg is what the server side hands the writer: one reply, or the
// error that ended the server connection.
type serverMsg struct {
	data []byte
	push bool
	err  error
}

// proxyConn is one client connection and its own server connection. A
// reader goroutine parses client commands, queues an entry for each and
// forwards those that go to the server; a server goroutine reads the
// server's replies one at a time; the writer goroutine takes the entries
// in order and writes each one's reply to the client.
type proxyConn struct {
	p              *Proxy
	client, server net.Conn
	cliR, srvR     *bufio.Reader
	cliW, srvW     *bufio.Writer
	notify         chan struct{}  // a new entry was queued
	replies        chan serverMsg // from serverLoop, unbuffered: one reply read ahead at most
	done           chan struct{}  // closed by teardown
	once           sync.Once
	ahead          *serverMsg // the writer's only: taken from replies while it waited for an entry

	// Under p.mu:
	queue []*entry
	held  *heldReply // nil when no reply is held
}

func newProxyConn(p *Proxy, client, server net.Conn) *proxyConn {
	return &proxyConn{
		p: p, client: client, server: server,
		cliR: bufio.NewReaderSize(client, connBuffer), cliW: bufio.NewWriterSize(client, connBuffer),
		srvR: bufio.NewReaderSize(server, connBuffer), srvW: bufio.NewWriterSize(server, connBuffer),
		notify:  make(chan struct{}, 1),
		replies: make(chan serverMsg),
		done:    make(chan struct{}),
	}
}

// readLoop reads client commands until the client side fails or a crash
// command arrives. Forwarded commands are flushed to the server whenever
// the client has sent nothing more yet.
func (c *proxyConn) readLoop() {
	for {
		args, err := readCommand(c.cliR)
		if err != nil {
			c.teardown(false)
			return
		}
		if len(args) == 0 {
			continue
		}
		e := &entry{rec: record(args)}
		crashes, fails := c.p.rules()
		e.crash = matchesAny(crashes, e.rec)
		if !e.crash {
			for _, f := range fails {
				if f.match(e.rec) {
					e.reply = f.reply
					break
				}
			}
		}
		c.p.mu.Lock()
		c.p.seen = append(c.p.seen, e.rec)
		c.queue = append(c.queue, e)
		c.p.mu.Unlock()
		select {
		case c.notify <- struct{}{}:
		default:
		}
		if e.crash {
			_ = c.srvW.Flush() // the commands before it get their replies
			return
		}
		if e.reply == nil {
			if err := writeCommand(c.srvW, args); err != nil {
				c.teardown(false)
				return
			}
		}
		if c.cliR.Buffered() == 0 {
			if err := c.srvW.Flush(); err != nil {
				c.teardown(false)
				return
			}
		}
	}
}

// serverLoop reads the server's replies and hands each to the writer,
// then the error that ends the connection (after every reply before it).
func (c *proxyConn) serverLoop() {
	for {
		data, push, err := readReply(c.srvR, nil)
		select {
		case c.replies <- serverMsg{data: data, push: push, err: err}:
		case <-c.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// writeLoop writes the replies of the queued entries to the client, in
// order, until either side fails or a crash entry is reached.
func (c *proxyConn) writeLoop() {
	defer c.teardown(false)
	for {
		e, ok := c.next()
		if !ok {
			return
		}
		reply := e.reply
		switch {
		case e.crash:
			_ = c.cliW.Flush() // the replies before it
			c.teardown(true)
			return
		case reply == nil:
			if reply, ok = c.serverReply(); !ok {
				return
			}
		}
		if !c.deliver(e, reply) {
			return
		}
	}
}

// next takes the oldest queued entry, flushing the client's replies
// before it waits for one. A push message that arrives meanwhile goes to
// the client; a reply is kept for serverReply, as its entry is queued
// already or is about to be. false: the connection is closing, or the
// server sent a reply when nothing was queued, or the server connection
// ended with nothing queued.
func (c *proxyConn) next() (*entry, bool) {
	for {
		c.p.mu.Lock()
		if len(c.queue) > 0 {
			e := c.queue[0]
			c.queue[0] = nil
			c.queue = c.queue[1:]
			c.p.mu.Unlock()
			return e, true
		}
		c.p.mu.Unlock()
		if err := c.cliW.Flush(); err != nil || c.ahead != nil {
			return nil, false
		}
		select {
		case <-c.notify:
		case m := <-c.replies:
			if m.err == nil && m.push {
				if _, err := c.cliW.Write(m.data); err != nil {
					return nil, false
				}
				continue
			}
			// The reader queues an entry before it forwards the command,
			// so the entry this reply answers is in the queue by now.
			c.ahead = &m
		case <-c.done:
			return nil, false
		}
	}
}

// serverReply waits for the server's next reply, flushing the client's
// replies before it waits; push messages before it go to the client.
// false: the server connection ended (the client's is closed after what
// was written to it) or the connection is closing.
func (c *proxyConn) serverReply() ([]byte, bool) {
	for {
		var m serverMsg
		if c.ahead != nil {
			m, c.ahead = *c.ahead, nil
		} else {
			select {
			case m = <-c.replies:
			default:
				if err := c.cliW.Flush(); err != nil {
					return nil, false
				}
				select {
				case m = <-c.replies:
				case <-c.done:
					return nil, false
				}
			}
		}
		if m.err != nil {
			_ = c.cliW.Flush()
			return nil, false
		}
		if !m.push {
			return m.data, true
		}
		if _, err := c.cliW.Write(m.data); err != nil {
			return nil, false
		}
	}
}

// deliver writes reply to the client, or holds it when a Hold matches.
// false: the connection is closing.
func (c *proxyConn) deliver(e *entry, reply []byte) bool {
	h := c.p.holdFor(e.rec)
	if h == nil {
		_, err := c.cliW.Write(reply)
		return err == nil
	}
	sent := 0
	if h.after > 0 {
		sent = min(h.after, len(reply))
		if _, err := c.cliW.Write(reply[:sent]); err != nil {
			return false
		}
	}
	if err := c.cliW.Flush(); err != nil {
		return false
	}
	c.p.mu.Lock()
	c.held = &heldReply{hold: h, rec: e.rec}
	c.p.mu.Unlock()
	h.noteHeld()
	select {
	case <-h.released:
	case <-c.done:
		return false
	}
	c.p.mu.Lock()
	c.held = nil
	c.p.mu.Unlock()
	_, err := c.cliW.Write(reply[sent:])
	return err == nil
}

// teardown closes both connections once, ends the connection's
// goroutines' waits and forgets the connection. abrupt resets the server
// connection (what it sends is dropped); the client connection always
// closes after what was written to it, so the replies before a crash
// arrive whole.
func (c *proxyConn) teardown(abrupt bool) {
	c.once.Do(func() {
		if abrupt {
			resetOnClose(c.server)
		}
		_ = c.client.Close()
		_ = c.server.Close()
		close(c.done)
		c.p.mu.Lock()
		delete(c.p.conns, c)
		c.queue, c.held = nil, nil
		c.p.mu.Unlock()
	})
}

// resetOnClose makes closing conn send a TCP reset instead of a FIN.
func resetOnClose(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
}

func matchesAny(ms []Match, rec [][]byte) bool {
	for _, m := range ms {
		if m(rec) {
			return true
		}
	}
	return false
}
