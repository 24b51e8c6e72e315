package redistest

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvshare/kvshare/loopback"
)

// Proxy bounds.
const (
	// proxyDialTimeout bounds the dial to the target for each accepted
	// client connection.
	proxyDialTimeout = 5 * time.Second
	// ProxyCloseTimeout bounds Close's wait for the proxy's goroutines.
	ProxyCloseTimeout = 10 * time.Second
)

// Proxy is a RESP-aware TCP proxy on 127.0.0.1 in front of a Redis server,
// for fault tests: it can hold, stall, fail and crash chosen commands'
// replies while all others pass unchanged and in order. Every accepted
// client connection gets its own connection to the target. Its methods
// are safe for concurrent use, while traffic flows.
type Proxy struct {
	target string
	ln     net.Listener
	wg     sync.WaitGroup
	live   atomic.Int64 // goroutines running, for tests

	mu      sync.Mutex
	closed  bool
	conns   map[*proxyConn]struct{}
	holds   []*Hold    // active, oldest first; replaced, never changed in place
	crashes []Match    // replaced, never changed in place
	fails   []failRule // replaced, never changed in place
	seen    [][][]byte // every command's record, in arrival order
}

// failRule answers matching commands with a RESP error.
type failRule struct {
	match Match
	reply []byte
}

// NewProxy listens on a free loopback port (loopback.Pick) and forwards
// every accepted connection to target ("host:port"), which need not be
// up yet: a client connection whose dial fails is closed.
func NewProxy(target string) (*Proxy, error) {
	if _, _, err := net.SplitHostPort(target); err != nil {
		return nil, fmt.Errorf("%w: proxy target %q: %v", ErrOptions, target, err)
	}
	var errs []error
	for range startAttempts {
		ports, err := loopback.PickPorts(1)
		if err != nil {
			return nil, err
		}
		ln, err := net.Listen("tcp4", loopback.HostPort(ports[0]))
		if err != nil {
			errs = append(errs, err) // taken since the probe
			continue
		}
		p := &Proxy{target: target, ln: ln, conns: map[*proxyConn]struct{}{}}
		p.spawn(p.acceptLoop)
		return p, nil
	}
	return nil, fmt.Errorf("redistest: proxy listener: %w", errors.Join(errs...))
}

// Addr is the proxy's address, "127.0.0.1:port": give it to clients in
// place of the target's.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Target is the address the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

// Close closes the listener and every connection, releases every hold,
// and waits for the proxy's goroutines to end, up to ProxyCloseTimeout.
// It is idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.DropAll()
	p.Clear()
	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(ProxyCloseTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		return fmt.Errorf("redistest: proxy %s: %d goroutines still running after %v", p.Addr(), p.live.Load(), ProxyCloseTimeout)
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("redistest: closing proxy %s: %w", p.Addr(), err)
	}
	return nil
}

// DropAll closes every connection open now, as a network failure would;
// clients reconnect through the listener.
func (p *Proxy) DropAll() {
	p.mu.Lock()
	conns := make([]*proxyConn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.teardown(false)
	}
}

// Conns is how many client connections are open through the proxy now.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// CrashOn makes every later matching command end its client connection
// and its server connection abruptly, as a server crash would: the
// command is not forwarded, nor is any command after it on that
// connection; the replies to the commands before it are written whole,
// then the client connection closes (the client reads end of file, a
// connection error, where the reply would be) and the server connection
// is reset.
func (p *Proxy) CrashOn(m Match) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.crashes = append(p.crashes[:len(p.crashes):len(p.crashes)], m)
}

// FailOn makes the proxy answer every later matching command itself with
// the RESP error "-ERR <msg>\r\n" (line breaks in msg become spaces),
// without forwarding it, in order with the other replies on its
// connection. CrashOn wins over FailOn.
func (p *Proxy) FailOn(m Match, msg string) {
	msg = strings.NewReplacer("\r", " ", "\n", " ").Replace(msg)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fails = append(p.fails[:len(p.fails):len(p.fails)], failRule{match: m, reply: []byte("-ERR " + msg + "\r\n")})
}

// Clear removes every CrashOn and FailOn rule and releases every hold.
func (p *Proxy) Clear() {
	p.mu.Lock()
	holds := p.holds
	p.crashes, p.fails = nil, nil
	p.mu.Unlock()
	for _, h := range holds {
		h.Release()
	}
}

// Seen counts the commands matching m that reached the proxy since it
// started, forwarded or not (rueidis's own HELLO, CLIENT and PING
// included). m sees what a Match sees: keys whole, other arguments cut to
// MatchValueBytes. The proxy keeps that short record of every command.
func (p *Proxy) Seen(m Match) int {
	p.mu.Lock()
	seen := p.seen // append-only: the first len(seen) records never change
	p.mu.Unlock()
	n := 0
	for _, cmd := range seen {
		if m(cmd) {
			n++
		}
	}
	return n
}

// spawn runs f on a goroutine the proxy counts and Close waits for.
func (p *Proxy) spawn(f func()) {
	p.wg.Add(1)
	p.live.Add(1)
	go func() {
		defer p.wg.Done()
		defer p.live.Add(-1)
		f()
	}()
}

// acceptLoop accepts client connections until the listener closes.
func (p *Proxy) acceptLoop() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			time.Sleep(10 * time.Millisecond) // a passing failure (EMFILE): try again
			continue
		}
		p.spawn(func() { p.serve(client) })
	}
}

// serve dials the target for one client connection and runs its
// goroutines: the client reader, the server reader and the writer.
func (p *Proxy) serve(client net.Conn) {
	server, err := net.DialTimeout("tcp", p.target, proxyDialTimeout)
	if err != nil {
		_ = client.Close()
		return
	}
	c := newProxyConn(p, client, server)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		_ = client.Close()
		_ = server.Close()
		return
	}
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	p.spawn(c.readLoop)
	p.spawn(c.serverLoop)
	c.writeLoop()
}

// rules returns the rules in force now.
func (p *Proxy) rules() (crashes []Match, fails []failRule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.crashes, p.fails
}
