package node

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/node/driverview"
	"github.com/kvshare/kvshare/nodewire"
)

// ErrShutDown is Serve's answer once Shutdown was called, and
// ListenAndServe's.
var ErrShutDown = errors.New("kvshare/node: shut down")

// Node is the kvshare node: it serves engines attached over Unix
// sockets, each lend through a backend of its own over the one shared
// driver. All methods are safe for concurrent use.
type Node struct {
	cfg  Config
	stem keys.Stem
	log  *slog.Logger

	tally   tally         // the node's counts, every engine's together
	tenants *tenantLedger // every tenant's usage, against its limits

	shared      *driverview.Shared // the driver every view shares, with the ledger of its recycles
	reclaimTurn chan struct{}      // one Reclaim at a time
	reclaimGate atomic.Bool        // a reclaim runs: new work is refused (reclaim_gate.go)
	recycles    atomic.Uint64      // the store client's recycles the node started
	gateClosed  func()             // tests: called once a reclaim closed its gate, before the recycle

	mu                  sync.Mutex
	listeners           map[*net.UnixListener]struct{}
	engines             map[*engine]struct{}
	kept                map[*lend]struct{} // lends kept after their engine returned or left them
	sessions            uint64             // sessions accepted, for their numbers
	attached            int64              // sessions welcomed
	refusedPeers        int64
	reclaims, reclaimed int64
	autoRunning         chan struct{} // the automatic reclaim runs: closed as it ends
	autoMissed          bool          // a lend was kept while it ran
	shutting            bool
	serving             sync.WaitGroup // one per session goroutine
	changed             chan struct{}  // closed and replaced when an engine ends or a kept lend is released
}

// New builds a node from cfg; it serves nothing until Serve or
// ListenAndServe. A refusal wraps [ErrConfig] and names the field.
func New(cfg Config) (*Node, error) {
	cfg, stem, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Node{
		cfg:         cfg,
		stem:        stem,
		log:         cfg.Logger,
		shared:      driverview.NewShared(cfg.Driver),
		tenants:     newTenantLedger(cfg.Tenants),
		reclaimTurn: make(chan struct{}, 1),
		listeners:   map[*net.UnixListener]struct{}{},
		engines:     map[*engine]struct{}{},
		kept:        map[*lend]struct{}{},
		changed:     make(chan struct{}),
	}, nil
}

// Serve accepts engines on l until ctx ends, l fails or Shutdown is
// called, each on a goroutine of its own; it closes l before it
// returns. It returns ctx's error, l's, or [ErrShutDown]. The engines
// attached stay attached until Shutdown: ctx bounds accepting only.
func (n *Node) Serve(ctx context.Context, l *net.UnixListener) error {
	n.mu.Lock()
	if n.shutting {
		n.mu.Unlock()
		_ = l.Close()
		return ErrShutDown
	}
	n.listeners[l] = struct{}{}
	n.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { _ = l.Close() })
	defer func() {
		stop()
		_ = l.Close()
		n.mu.Lock()
		delete(n.listeners, l)
		n.mu.Unlock()
	}()
	for {
		c, err := l.AcceptUnix()
		if err != nil {
			n.mu.Lock()
			shutting := n.shutting
			n.mu.Unlock()
			switch {
			case shutting:
				return ErrShutDown
			case ctx.Err() != nil:
				return ctx.Err()
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("kvshare/node: accept: %w", err)
		}
		if !n.admit() {
			_ = c.Close()
			return ErrShutDown
		}
		go func() {
			defer n.serving.Done()
			n.attach(c)
		}()
	}
}

// admit counts a session goroutine in, unless the node is shutting down.
func (n *Node) admit() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.shutting {
		return false
	}
	n.serving.Add(1)
	return true
}

// ListenAndServe creates the socket at Config.Socket with Config.Mode
// and serves it as Serve does, removing the socket when it returns. A
// stale socket at the path (nobody listening) is replaced; anything
// else there is refused.
func (n *Node) ListenAndServe(ctx context.Context) error {
	l, err := Listen(n.cfg.Socket, n.cfg.Mode)
	if err != nil {
		return err
	}
	defer os.Remove(n.cfg.Socket)
	return n.Serve(ctx, l)
}

// Shutdown ends the node: it stops accepting, ends every engine's
// session as the engine's end of the connection would (its attempts
// cancelled, each lend's backend shut down within Config.EngineWait,
// what cannot be proven ended kept mapped), says goodbye to each
// (code ShuttingDown, what is kept of its lends), and waits within ctx
// for the sessions to end. It returns nil when nothing of any engine's
// memory is mapped any more; else the labels of what is still mapped or
// still ending ("engine gpu0 (session 3) lend 2: 4194304 bytes held"),
// which the node goes on giving back as access ends. Only once it
// returned nil may the caller close the driver.
func (n *Node) Shutdown(ctx context.Context) []string {
	n.mu.Lock()
	n.shutting = true
	for l := range n.listeners {
		_ = l.Close()
	}
	engines := make([]*engine, 0, len(n.engines))
	for e := range n.engines {
		engines = append(engines, e)
	}
	n.mu.Unlock()
	for _, e := range engines {
		e.stop(nodewire.CodeShuttingDown, "the node is shutting down")
	}
	for {
		n.mu.Lock()
		held := n.heldLocked()
		changed := n.changed
		n.mu.Unlock()
		if len(held) == 0 {
			n.serving.Wait() // every engine ended: only its goroutine's return is left
			if auto := n.autoReclaiming(); auto != nil {
				select { // its recycle may still be inside the driver
				case <-auto:
				case <-ctx.Done():
					return []string{"the automatic reclaim: still running"}
				}
			}
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return held
		}
	}
}

// Held returns the labels of the lends the node keeps because access
// could not be proven ended when their engine returned or left them
// ("engine gpu0 (session 3) lend 2: 4194304 bytes held"), and of the
// sessions still ending; nil when there are none.
func (n *Node) Held() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.heldLocked()
}

// heldLocked returns the labels of the engines not yet ended and of the
// lends still mapped.
func (n *Node) heldLocked() []string {
	var labels []string
	engines := slices.SortedFunc(func(yield func(*engine) bool) {
		for e := range n.engines {
			if !yield(e) {
				return
			}
		}
	}, func(a, b *engine) int { return cmp.Compare(a.session, b.session) })
	for _, e := range engines {
		labels = append(labels, e.String()+": still ending")
	}
	kept := slices.SortedFunc(func(yield func(*lend) bool) {
		for l := range n.kept {
			if !yield(l) {
				return
			}
		}
	}, func(a, b *lend) int { return cmp.Or(cmp.Compare(a.e.session, b.e.session), cmp.Compare(a.id, b.id)) })
	for _, l := range kept {
		labels = append(labels, fmt.Sprintf("%v: %d bytes held", l, l.bytes()))
	}
	return labels
}

// broadcastLocked wakes whoever waits on changed.
func (n *Node) broadcastLocked() {
	close(n.changed)
	n.changed = make(chan struct{})
}

// Stats returns the node's counters, and each attached engine's.
// AttemptsOpen is read from the lends' backends.
func (n *Node) Stats() Stats {
	s := Stats{Counts: n.tally.snapshot()}
	n.mu.Lock()
	engines := make([]*engine, 0, len(n.engines))
	for e := range n.engines {
		engines = append(engines, e)
	}
	lends := map[*lend]struct{}{}
	for l := range n.kept {
		lends[l] = struct{}{}
	}
	s.Attached, s.PeersRefused = n.attached, n.refusedPeers
	s.Reclaims, s.BytesReclaimed = n.reclaims, n.reclaimed
	n.mu.Unlock()
	slices.SortFunc(engines, func(a, b *engine) int { return cmp.Compare(a.session, b.session) })
	for _, e := range engines {
		e.mu.Lock()
		for _, l := range e.lends {
			lends[l] = struct{}{}
		}
		e.mu.Unlock()
	}
	open := map[*engine]int64{}
	for l := range lends {
		if be := l.backend(); be != nil {
			k := be.Stats().AttemptsOpen
			open[l.e] += k
			s.AttemptsOpen += k
		}
	}
	for _, e := range engines {
		if es, ok := e.stats(); ok {
			es.AttemptsOpen = open[e]
			s.PerEngine = append(s.PerEngine, es)
		}
	}
	s.Engines = int64(len(s.PerEngine))
	s.PerTenant = n.tenants.snapshot()
	return s
}
