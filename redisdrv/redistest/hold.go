package redistest

import (
	"context"
	"fmt"
	"sync"
)

// A Hold keeps the replies of the commands it matches from their clients
// until Release. Its methods are safe for concurrent use.
type Hold struct {
	p     *Proxy
	match Match
	after int // bytes written before holding; -1 holds the whole reply

	released    chan struct{} // closed by Release
	releaseOnce sync.Once
	first       chan struct{} // closed when the first reply is held
	firstOnce   sync.Once
}

// HoldReplies holds, from now on, the reply to every matching command:
// the command is forwarded and executed, its reply read in full from the
// server but not written to the client until Release. Replies that follow
// on the same client connection wait behind it, so each connection's
// reply order is kept; other connections flow. Holds apply to the
// proxy's own FailOn replies too, never to push messages. When two holds
// match one reply, the older one takes it. A held reply keeps its
// connection open until Release even when the server side closes
// meanwhile (the client then gets the reply, then the end of the
// connection); Close and DropAll end it at once.
func (p *Proxy) HoldReplies(m Match) *Hold { return p.addHold(m, -1) }

// StallReplies is HoldReplies that first writes the first after bytes of
// each matching reply to the client (all of it when shorter), then holds
// the rest: a transfer stopped in the middle of a value. Release writes
// the rest to the client connection if it is still open.
func (p *Proxy) StallReplies(m Match, after int) *Hold { return p.addHold(m, max(after, 0)) }

func (p *Proxy) addHold(m Match, after int) *Hold {
	h := &Hold{p: p, match: m, after: after, released: make(chan struct{}), first: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holds = append(p.holds[:len(p.holds):len(p.holds)], h)
	return h
}

// Held waits until the hold has held at least one reply (for a stall,
// after its first bytes were written to the client); the context's error
// otherwise.
func (h *Hold) Held(ctx context.Context) error {
	select {
	case <-h.first:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("redistest: no reply held yet: %w", context.Cause(ctx))
	}
}

// Holding reports whether, now, this hold holds the reply to a command
// carrying key (among its KeyArgs), or a command carrying key waits behind
// a reply it holds on the same connection.
func (h *Hold) Holding(key string) bool {
	if h.isReleased() {
		return false
	}
	keys := []string{key}
	h.p.mu.Lock()
	defer h.p.mu.Unlock()
	for c := range h.p.conns {
		if c.held == nil || c.held.hold != h {
			continue
		}
		if carriesAny(c.held.rec, keys) {
			return true
		}
		for _, e := range c.queue {
			if carriesAny(e.rec, keys) {
				return true
			}
		}
	}
	return false
}

// Count is how many replies the hold holds now, one at most per client
// connection.
func (h *Hold) Count() int {
	if h.isReleased() {
		return 0
	}
	h.p.mu.Lock()
	defer h.p.mu.Unlock()
	n := 0
	for c := range h.p.conns {
		if c.held != nil && c.held.hold == h {
			n++
		}
	}
	return n
}

// Release writes every reply the hold holds to its client (connections
// closed meanwhile drop theirs) and stops holding. It is idempotent and
// returns without waiting for the writes.
func (h *Hold) Release() {
	h.releaseOnce.Do(func() {
		h.p.mu.Lock()
		var kept []*Hold
		for _, o := range h.p.holds {
			if o != h {
				kept = append(kept, o)
			}
		}
		h.p.holds = kept
		h.p.mu.Unlock()
		close(h.released)
	})
}

func (h *Hold) isReleased() bool {
	select {
	case <-h.released:
		return true
	default:
		return false
	}
}

// noteHeld records that a reply is held.
func (h *Hold) noteHeld() { h.firstOnce.Do(func() { close(h.first) }) }

// holdFor returns the oldest active hold that matches rec, nil when none.
func (p *Proxy) holdFor(rec [][]byte) *Hold {
	p.mu.Lock()
	holds := p.holds
	p.mu.Unlock()
	for _, h := range holds {
		if !h.isReleased() && h.match(rec) {
			return h
		}
	}
	return nil
}
