package redisdrv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/redisdrv/slotmap"
	"github.com/kvshare/kvshare/scheduler"
)

// The router's bounds.
const (
	// slotsTimeout bounds one CLUSTER SLOTS round trip while the slot map
	// is read again.
	slotsTimeout = 2 * time.Second
	// staleRefreshEvery is how often at most a node that failed, or a
	// slot no node served, makes the next part read the slot map again
	// (a MOVED reply does so at once: the server named the new owner).
	staleRefreshEvery = time.Second
)

// errNoOwner is a row's error when the slot map names no node for its
// key's slot.
var errNoOwner = errors.New("redisdrv: no cluster node serves the key's slot")

// router sends each key's commands to the server that holds it: the one
// server, or on a cluster the node that owns the key's hash slot in the
// slot map it read last (CLUSTER SLOTS). It keeps one client a node,
// made the first time a key routes there, and reads the map again when
// a server answers MOVED, and at most once a second after a node failed
// or a slot had no owner. Its methods are safe for concurrent use.
type router struct {
	log *slog.Logger
	// cluster is false for one server: single is then its client and
	// there is no slot map.
	cluster bool
	single  rueidis.Client
	opt     rueidis.ClientOption // a cluster node's client, InitAddress aside
	seeds   []string

	table     atomic.Pointer[slotmap.Map]
	refreshMu sync.Mutex // one reading of the slot map at a time

	mu          sync.Mutex
	clients     map[string]rueidis.Client // a cluster's, by node address
	stale       bool                      // a node failed or a slot had no owner since the last reading
	lastRefresh time.Time
	refreshes   int64
	closed      bool
}

// singleRouter routes every key to one server's client.
func singleRouter(client rueidis.Client, log *slog.Logger) *router {
	return &router{log: log, single: client}
}

// clusterRouter reads the cluster's slot map from the first of seeds that
// answers CLUSTER SLOTS, within ctx; opt (its InitAddress aside) is how
// each node's client is made. On error every client it made is closed.
func clusterRouter(ctx context.Context, opt rueidis.ClientOption, seeds []string, log *slog.Logger) (*router, error) {
	if len(seeds) == 0 {
		return nil, fmt.Errorf("%w: a cluster needs at least one seed address", ErrConfig)
	}
	r := &router{log: log, cluster: true, opt: opt, seeds: slices.Clone(seeds), clients: map[string]rueidis.Client{}}
	if err := r.refresh(ctx, nil); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// nodeRows is the rows of one part (or the names of one lookup) that go
// to one server, and what came of them.
type nodeRows struct {
	addr   string         // the server's address; "" for the one server of a non-cluster router
	client rueidis.Client // nil with err set: the rows cannot be sent
	err    error
	rows   []int // part rows (a lookup's name positions)
	asking bool  // send each command after ASKING: the rows were redirected by ASK
	// Filled while the rows are sent, by that goroutine alone:
	redirects []redirect
	trips     int64
	resends   int64
}

// redirect is a row a server answered MOVED or ASK.
type redirect struct {
	row  int
	addr string
	ask  bool
}

// split groups rows by the server that holds each one's key.
func (r *router) split(keys []string, rows []int) []*nodeRows {
	if !r.cluster {
		return []*nodeRows{{client: r.single, rows: rows}}
	}
	r.refreshIfStale()
	t := r.table.Load()
	var byNode []*nodeRows // indexed by the slot map's node index
	var lost *nodeRows
	for _, j := range rows {
		n := t.Node(keys[j])
		if n < 0 {
			if lost == nil {
				lost = &nodeRows{err: errNoOwner}
			}
			lost.rows = append(lost.rows, j)
			continue
		}
		if byNode == nil {
			byNode = make([]*nodeRows, len(t.Addrs))
		}
		if byNode[n] == nil {
			byNode[n] = &nodeRows{addr: t.Addrs[n]}
		}
		byNode[n].rows = append(byNode[n].rows, j)
	}
	groups := make([]*nodeRows, 0, len(byNode)+1)
	for _, g := range byNode {
		if g != nil {
			g.client, g.err = r.client(g.addr)
			groups = append(groups, g)
		}
	}
	if lost != nil {
		r.markStale()
		groups = append(groups, lost)
	}
	return groups
}

// regroup groups redirected rows by the server each redirect named, ASK
// and MOVED apart; a MOVED among them reads the slot map again first
// (within ctx), so later parts go straight to the new owner.
func (r *router) regroup(ctx context.Context, reds []redirect) []*nodeRows {
	moved := false
	type target struct {
		addr string
		ask  bool
	}
	byTarget := map[target]*nodeRows{}
	var groups []*nodeRows
	for _, rd := range reds {
		moved = moved || !rd.ask
		k := target{rd.addr, rd.ask}
		g := byTarget[k]
		if g == nil {
			g = &nodeRows{addr: rd.addr, asking: rd.ask}
			g.client, g.err = r.client(rd.addr)
			byTarget[k] = g
			groups = append(groups, g)
		}
		g.rows = append(g.rows, rd.row)
	}
	if moved {
		_ = r.refresh(ctx, r.table.Load()) // on failure the redirects still say where to go
	}
	return groups
}

// client returns the client of the node at addr, making it the first
// time (outside the lock: a dial may take its timeout).
func (r *router) client(addr string) (rueidis.Client, error) {
	if !r.cluster {
		return r.single, nil
	}
	r.mu.Lock()
	c, ok := r.clients[addr]
	closed := r.closed
	r.mu.Unlock()
	switch {
	case ok:
		return c, nil
	case closed:
		return nil, fmt.Errorf("redisdrv: %s: the driver is closed", addr)
	}
	c, err := rueidis.NewClient(slotmap.NodeOption(r.opt, addr))
	if err != nil {
		r.markStale()
		return nil, fmt.Errorf("redisdrv: connecting to cluster node %s: %w", addr, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if had, ok := r.clients[addr]; ok || r.closed {
		c.Close() // another part made one meanwhile, or Close came
		if r.closed {
			return nil, fmt.Errorf("redisdrv: %s: the driver is closed", addr)
		}
		return had, nil
	}
	r.clients[addr] = c
	return c, nil
}

// markStale notes that a node failed or a slot had no owner: the next
// split reads the slot map again, unless it was read less than
// staleRefreshEvery ago.
func (r *router) markStale() {
	if !r.cluster {
		return
	}
	r.mu.Lock()
	r.stale = true
	r.mu.Unlock()
}

// refreshIfStale reads the slot map again when a failure marked it
// stale and the last reading is old enough.
func (r *router) refreshIfStale() {
	r.mu.Lock()
	due := r.stale && time.Since(r.lastRefresh) >= staleRefreshEvery
	r.mu.Unlock()
	if due {
		ctx, cancel := context.WithTimeout(context.Background(), slotsTimeout)
		defer cancel()
		_ = r.refresh(ctx, r.table.Load())
	}
}

// refresh reads the slot map again from the nodes of the current map,
// then the seeds, the first that answers, unless another reading
// replaced seen (the map the caller saw) meanwhile.
func (r *router) refresh(ctx context.Context, seen *slotmap.Map) error {
	r.refreshMu.Lock()
	defer r.refreshMu.Unlock()
	if cur := r.table.Load(); cur != seen {
		return nil // read again meanwhile
	}
	var asked []string
	if seen != nil {
		asked = slices.Clone(seen.Addrs)
	}
	for _, s := range r.seeds {
		if !slices.Contains(asked, s) {
			asked = append(asked, s)
		}
	}
	var errs []error
	for _, addr := range asked {
		t, err := r.readSlots(ctx, addr)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", addr, err))
			if ctx.Err() != nil {
				break
			}
			continue
		}
		r.table.Store(t)
		r.mu.Lock()
		r.stale, r.lastRefresh = false, time.Now()
		r.refreshes++
		r.mu.Unlock()
		if seen == nil || !slices.Equal(seen.Addrs, t.Addrs) {
			r.log.Info("redisdrv: cluster slot map read", "from", addr, "nodes", t.Addrs)
		}
		return nil
	}
	r.mu.Lock()
	r.lastRefresh = time.Now()
	r.mu.Unlock()
	return fmt.Errorf("redisdrv: reading the cluster's slot map (CLUSTER SLOTS): %w", errors.Join(errs...))
}

// readSlots asks the node at addr for the slot map.
func (r *router) readSlots(ctx context.Context, addr string) (*slotmap.Map, error) {
	c, err := r.client(addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, slotsTimeout)
	defer cancel()
	var m slotmap.Map
	if p := scheduler.Call(func() { m, err = slotmap.Read(ctx, c, addr) }); p != nil {
		return nil, fmt.Errorf("the client panicked: %v", p)
	}
	if err != nil {
		return nil, err
	}
	if len(m.Addrs) == 0 {
		return nil, errors.New("CLUSTER SLOTS names no node: no slot is assigned")
	}
	return &m, nil
}

// nodes returns the addresses of the current slot map (nil for one
// server) and how many times it was read.
func (r *router) nodes() ([]string, int64) {
	r.mu.Lock()
	n := r.refreshes
	r.mu.Unlock()
	if t := r.table.Load(); t != nil {
		return slices.Clone(t.Addrs), n
	}
	return nil, n
}

// close closes every client; it returns a panic of one as an error.
func (r *router) close() error {
	if !r.cluster {
		if p := scheduler.Call(r.single.Close); p != nil {
			return fmt.Errorf("the client panicked: %v", p)
		}
		return nil
	}
	r.mu.Lock()
	r.closed = true
	clients := r.clients
	r.clients = map[string]rueidis.Client{}
	r.mu.Unlock()
	var errs []error
	for addr, c := range clients {
		if p := scheduler.Call(c.Close); p != nil {
			errs = append(errs, fmt.Errorf("the client of %s panicked: %v", addr, p))
		}
	}
	return errors.Join(errs...)
}
