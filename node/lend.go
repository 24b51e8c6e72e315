package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/nodewire"
)

// lend is one memfd an engine lent: its mapping, and the backend that
// binds its regions through a view of its own over the shared driver.
// The mapping is unmapped only by the binding's hold (mapping.Release),
// once every region is confirmed unregistered.
type lend struct {
	id uint32
	e  *engine
	m  *mapping
	be *binding.Backend // set once Open returned

	// Guarded by e.mu.
	inFlight  int  // attempts on it not quiesced
	returning bool // a return is under way

	// Guarded by e.n.mu.
	kept     bool // the engine returned or left it held: the node's to finish
	released bool // unmapped
}

func (l *lend) String() string { return fmt.Sprintf("%v lend %d", l.e, l.id) }

func (l *lend) bytes() int64 { return l.m.g.bytes }

// backend is the lend's backend, nil until Open returned it.
func (l *lend) backend() *binding.Backend {
	l.e.n.mu.Lock()
	defer l.e.n.mu.Unlock()
	return l.be
}

// lend maps a lent memfd, checked, and binds its regions; it answers
// lent or refused. fd is closed either way: the mapping keeps the file.
func (e *engine) lend(request uint64, m *nodewire.Lend, fd int) {
	defer closeFD(fd)
	e.mu.Lock()
	room := e.n.cfg.MaxLendBytes - e.lent
	e.mu.Unlock()
	g, r := checkGeometry(m.SlotBytes, m.SlotCount, m.Regions, e.n.cfg.MaxRegions, room)
	if r == nil {
		r = inspectMemfd(fd, g)
	}
	if r == nil {
		r = e.n.reclaimRefusal("lend")
	}
	if r == nil { // last, before the mapping: a refusal touched nothing
		r = e.n.tenants.take(e.tenant, usage{lent: g.bytes})
	}
	if r != nil {
		e.refuse(request, r)
		return
	}
	l := &lend{e: e}
	mp, r := mapMemfd(fd, g, l.unmapped)
	if r != nil {
		e.n.tenants.give(e.tenant, usage{lent: g.bytes})
		e.refuse(request, r)
		return
	}
	l.m = mp
	e.mu.Lock()
	e.nextLend++
	if e.nextLend == 0 { // 2^32 lends later: ids start again at 1
		e.nextLend = 1
	}
	for e.lends[e.nextLend] != nil {
		e.nextLend++
	}
	l.id = e.nextLend
	e.lends[l.id] = l
	e.lent += g.bytes
	e.mu.Unlock()
	e.count(func(c *Counts) { c.Lends++; c.LentBytes += g.bytes })

	view := e.n.newView()
	be, err := binding.Open(e.ctx, binding.Loan{Regions: mp.regions(), Hold: mp}, view, e.n.backendConfig(e.scope.scope))
	if err != nil {
		var live *binding.LiveRegistrationError
		if errors.As(err, &live) {
			// A registration may be live: the mapping stays until
			// Unbind revokes it, in the background, for as long as
			// that takes.
			e.n.keep(l)
			go e.n.unbindLive(l, live)
		}
		// Otherwise Open released the hold: the mapping is gone.
		e.mu.Lock()
		delete(e.lends, l.id)
		e.mu.Unlock()
		e.refuse(request, refuse(nodewire.CodeStore, "lend", "the store did not take the memory: %v", err))
		return
	}
	e.n.mu.Lock()
	l.be = be
	e.n.mu.Unlock()
	e.log.Debug("kvshare/node: lent", "lend", l.id, "regions", g.regions, "slot_bytes", g.slotBytes, "slot_count", g.slotCount, "bytes", g.bytes)
	e.post(request, &nodewire.Lent{Lend: l.id, RegionStride: uint64(g.stride)})
}

// unmapped is the mapping's word that Release ran: the memory is
// unmapped (err nil) and uncounted, and a kept lend's backend is
// closed (which closes its view).
func (l *lend) unmapped(m *mapping, err error) {
	if err != nil {
		l.e.n.log.Error("kvshare/node: munmap failed: the memory stays mapped", "lend", l.id, "err", err)
		return
	}
	n := l.e.n
	n.mu.Lock()
	l.released = true
	kept := l.kept
	if kept {
		delete(n.kept, l)
	}
	be := l.be
	n.mu.Unlock()
	e := l.e
	e.mu.Lock()
	e.lent -= m.g.bytes
	// Every attempt on the lend quiesced before its hold was released:
	// those whose watcher left with the session give their tenant's
	// count back now.
	for _, t := range e.transfers {
		if t != nil && t.l == l {
			e.settleLocked(t)
		}
	}
	e.mu.Unlock()
	e.n.tenants.give(e.tenant, usage{lent: m.g.bytes})
	e.count(func(c *Counts) {
		c.Lends--
		c.LentBytes -= m.g.bytes
		if kept {
			c.HeldLends--
			c.HeldBytes -= m.g.bytes
		}
	})
	// Wake the waiters only once the counts say the lend is gone: one
	// woken before would read the old counts and sleep on a channel
	// nothing closes again.
	n.mu.Lock()
	n.broadcastLocked()
	n.mu.Unlock()
	if kept {
		n.log.Info("kvshare/node: a kept lend ended: unmapped", "engine", e.String(), "lend", l.id, "bytes", m.g.bytes)
		if be != nil {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), n.cfg.EngineWait)
				defer cancel()
				if err := be.Close(ctx); err != nil {
					n.log.Warn("kvshare/node: closing a kept lend's view", "lend", l.id, "err", err)
				}
			}()
		}
	}
}

// keep makes l the node's to finish: still mapped because access could
// not be proven ended, counted held until its hold is released.
func (n *Node) keep(l *lend) {
	n.mu.Lock()
	if l.released || l.kept {
		n.mu.Unlock()
		return
	}
	l.kept = true
	n.kept[l] = struct{}{}
	n.mu.Unlock()
	b := l.bytes()
	l.e.count(func(c *Counts) { c.HeldLends++; c.HeldBytes += b })
	n.log.Warn("kvshare/node: lend kept: access could not be proven ended", "engine", l.e.String(), "lend", l.id, "bytes", b)
	n.autoReclaimAfterKeep()
}

// unbindLive revokes the registrations a failed Open may have left
// live, retrying until it can; the hold's release then unmaps.
func (n *Node) unbindLive(l *lend, live *binding.LiveRegistrationError) {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.EngineWait)
		err := live.Unbind(ctx)
		cancel()
		if err == nil || errors.Is(err, binding.ErrDriverOpen) {
			return // the hold is released; a view left open holds no memory
		}
		n.log.Warn("kvshare/node: a lend's registration may be live; retrying", "lend", l.id, "err", err)
	}
}

// returnLend gives a lend back: its backend is shut down (the
// outcomes of its attempts in flight forced, their calls cancelled) and
// closed within Config.EngineWait, and the engine told Returned, or
// Held when access could not be proven ended in time: the lend is then
// kept, mapped and counted, and unmapped once its hold is released. A
// second return of a lend being returned is refused (Busy).
func (e *engine) returnLend(request uint64, id uint32) {
	e.mu.Lock()
	l := e.lends[id]
	var r *refusal
	switch {
	case l == nil:
		r = refuse(nodewire.CodeUnknownLend, "return.lend", "no lend %d", id)
	case l.returning:
		r = refuse(nodewire.CodeBusy, "return.lend", "lend %d is being returned already", id)
	default:
		l.returning = true
		e.work.Add(1)
	}
	e.mu.Unlock()
	if r != nil {
		e.refuse(request, r)
		return
	}
	go func() {
		defer e.work.Done()
		ctx, cancel := context.WithTimeout(context.Background(), e.n.cfg.EngineWait)
		err := l.be.Close(ctx)
		cancel()
		if err != nil {
			e.n.keep(l)
			e.log.Warn("kvshare/node: return: lend held", "lend", id, "err", err)
		}
		e.mu.Lock()
		delete(e.lends, id)
		e.mu.Unlock()
		if err != nil {
			e.post(request, &nodewire.Held{Bytes: uint64(l.bytes())})
			return
		}
		e.post(request, &nodewire.Returned{})
	}()
}
