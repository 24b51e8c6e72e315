package node

import (
	"fmt"
	"os"

	"github.com/kvshare/kvshare/nodewire"
)

// handle handles one request of the session, in the order they came.
// When the session ends, end is true with the goodbye's code and reason
// (code 0: the engine ended it). It never blocks on the store: what
// waits runs on a goroutine of its own. fd is the descriptor the frame
// carried (-1 for none); handle owns it.
func (e *engine) handle(h nodewire.Header, m nodewire.Message, fd int) (code nodewire.Code, why string, end bool) {
	if _, isLend := m.(*nodewire.Lend); !isLend || !e.isWelcomed() {
		closeFD(fd) // only a lend of a welcomed session takes one
		fd = -1
	} else if fd < 0 {
		e.refuse(h.Request, refuse(nodewire.CodeBadLend, "lend.fd", "a lend carries its memfd, and this one carried none"))
		return 0, "", false
	}
	if !e.isWelcomed() {
		hello, ok := m.(*nodewire.Hello)
		if !ok {
			return nodewire.CodeProtocol, fmt.Sprintf("header.type: a %v before the hello; the first frame is a hello", h.Type), true
		}
		return e.hello(h.Request, hello)
	}
	switch m := m.(type) {
	case *nodewire.Hello:
		e.refuse(h.Request, refuse(nodewire.CodeProtocol, "hello", "the session was welcomed already"))
	case *nodewire.Lend:
		e.lend(h.Request, m, fd)
	case *nodewire.Transfer:
		e.transfer(h.Request, m)
	case *nodewire.Lookup:
		e.lookup(h.Request, m)
	case *nodewire.Cancel:
		e.cancelAttempt(m.Attempt)
	case *nodewire.Return:
		e.returnLend(h.Request, m.Lend)
	case *nodewire.Stats:
		e.post(h.Request, e.n.Stats().reply())
	case *nodewire.ClientGoodbye:
		return 0, "the engine said goodbye: " + m.Reason, true
	default:
		return nodewire.CodeProtocol, fmt.Sprintf("header.type: a %v is the node's to send", h.Type), true
	}
	return 0, "", false
}

// hello welcomes the engine, or refuses a version or a scope this node
// does not serve, or a tenant the peer may not declare, and ends the
// session.
func (e *engine) hello(request uint64, m *nodewire.Hello) (nodewire.Code, string, bool) {
	switch {
	case m.Version != nodewire.Version:
		r := refuse(nodewire.CodeVersion, "hello.version", "version %d; this node speaks version %d", m.Version, nodewire.Version)
		e.refuse(request, r)
		return r.code, r.Error(), true
	}
	sc, r := e.n.scopeOf(m.Scope)
	if r == nil {
		r = e.n.tenants.declare(sc.tenant, e.peer)
	}
	if r != nil {
		e.refuse(request, r)
		return r.code, r.Error(), true
	}
	e.scope = sc
	e.finder = e.n.newLookups(sc.stem)
	e.mu.Lock()
	e.welcomed, e.name, e.tenant = true, m.Engine, sc.tenant
	e.mu.Unlock()
	e.log = e.log.With("engine", m.Engine, "scope", sc.String())
	e.n.mu.Lock()
	e.n.attached++
	e.n.mu.Unlock()
	cfg := e.n.cfg
	e.post(request, &nodewire.Welcome{
		Version:      nodewire.Version,
		NodePID:      uint32(os.Getpid()),
		MaxFrame:     cfg.MaxFrame,
		MaxAttempts:  uint32(min(cfg.MaxAttempts, 1<<31)),
		MaxRows:      uint32(min(cfg.MaxRows, 1<<31)),
		MaxLendBytes: uint64(cfg.MaxLendBytes),
	})
	e.log.Info("kvshare/node: engine attached")
	return 0, "", false
}
