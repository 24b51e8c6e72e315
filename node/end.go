package node

import (
	"context"
	"sync"
	"time"

	"github.com/kvshare/kvshare/nodewire"
)

// end ends the session, whoever ended it: it takes no more work,
// cancels the engine's attempts, closes every lend's backend within
// Config.EngineWait (all at once) — a lend whose access cannot be
// proven ended by then is kept, mapped and counted, and finished when
// its hold is released —, waits for the session's goroutines, drains
// its lookup view, says goodbye when the node ended the session (code
// non-zero: what it keeps of the engine's lends, too), and closes the
// connection.
func (e *engine) end(code nodewire.Code, why string, written <-chan struct{}) {
	e.mu.Lock()
	e.ending = true
	lends := make([]*lend, 0, len(e.lends))
	for _, l := range e.lends {
		lends = append(lends, l)
	}
	transfers := make([]*transfer, 0, len(e.transfers))
	for _, t := range e.transfers {
		if t != nil {
			transfers = append(transfers, t)
		}
	}
	e.mu.Unlock()
	if code != 0 {
		e.count(ended(code))
		e.log.Warn("kvshare/node: session ended by the node", "code", code, "why", why)
	} else {
		e.log.Info("kvshare/node: session ended", "why", why)
	}

	for _, t := range transfers {
		t.att.Cancel()
	}
	var wg sync.WaitGroup
	for _, l := range lends {
		if l.be == nil {
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), e.n.cfg.EngineWait)
			defer cancel()
			if err := l.be.Close(ctx); err != nil {
				e.n.keep(l)
				e.log.Warn("kvshare/node: lend kept at the session's end", "lend", l.id, "err", err)
			}
		})
	}
	wg.Wait()
	e.cancel() // watchers of attempts that did not quiesce, and lookups, leave
	e.work.Wait()
	if e.finder != nil {
		ctx, cancel := context.WithTimeout(context.Background(), e.n.cfg.EngineWait)
		if err := e.finder.close(ctx); err != nil {
			e.log.Warn("kvshare/node: the session's lookups", "err", err)
		}
		cancel()
	}

	var bye nodewire.Message // the engine's own end needs none
	if code != 0 {
		heldLends, heldBytes := e.n.heldOf(e)
		bye = &nodewire.NodeGoodbye{Code: code, Reason: why, HeldBytes: uint64(heldBytes), HeldLends: uint32(heldLends)}
	}
	e.out.last(0, bye)
	select {
	case <-written:
	case <-time.After(e.n.cfg.EngineWait): // a peer that reads nothing more: close under the writer
	}
	if code != 0 {
		lingerClose(e.conn) // the goodbye must reach the peer, not a reset
	}
	_ = e.wire.Close()
	<-written
	if e.isWelcomed() {
		e.n.tenants.leave(e.tenant) // what its memory holds stays counted until let go
	}
	e.n.mu.Lock()
	delete(e.n.engines, e)
	e.n.broadcastLocked()
	e.n.mu.Unlock()
}

// heldOf returns the lends of e the node keeps, and their bytes.
func (n *Node) heldOf(e *engine) (lends int, bytes int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for l := range n.kept {
		if l.e == e {
			lends++
			bytes += l.bytes()
		}
	}
	return lends, bytes
}
