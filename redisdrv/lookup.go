package redisdrv

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/scheduler"
)

// MaxLookupsInStore bounds the lookup calls inside the client at once,
// those a lookup abandoned at its deadline included: a lookup that finds
// the bound reached answers Unknown for every name at once, sending
// nothing, rather than pile up goroutines behind a server that does not
// answer.
const MaxLookupsInStore = 8

// probe is one lookup's round trip: its own keys (strings the client
// keeps, never lent memory), the commands and their answers.
type probe struct {
	keys   []string
	hashes []uint64
	ask    []int               // the names sent, by index
	found  []contract.Presence // by name index: what the server answered for the names sent
	trips  int64
	panic  any
	done   chan struct{}
	// finished (the round trip returned) and abandoned (Lookup answered
	// without it) are guarded by the driver's lock.
	finished, abandoned bool
}

// Lookup is [contract.Looker] over Redis: one pipeline of EXISTS key,
// one a name (1 Present, 0 Absent, an error reply Unknown), a key a put
// of this driver is writing InFlight without asking the server. A Redis
// value is whole the moment it exists (SET is atomic), so no other
// writer's value is ever "in flight": InFlight is this driver's own puts
// alone, which is why the driver declares LookupInFlight.
//
// The round trip runs on a goroutine of the driver, bounded by the
// driver's call timeout; when ctx ends first, Lookup answers Unknown for
// every name it had not answered and abandons the round trip, which owns
// only its own key strings and answers (a lookup lends no memory) and
// ends by the timeout at the latest. While any lookup is inside the
// client Drain answers false and Close is refused. Refusals, with an
// error wrapping [contract.ErrDriverRejected] and nothing sent: after
// Drain, a batch without a key maker, an empty name, a name without a
// key, a name twice.
func (d *Driver) Lookup(ctx context.Context, b contract.LookupBatch, dst []contract.Presence) ([]contract.Presence, error) {
	dst = dst[:0]
	d.mu.Lock()
	err := d.usableLocked("lookup")
	d.mu.Unlock()
	if err != nil {
		return dst, err
	}
	p, err := d.buildProbe(b)
	if err != nil {
		return dst, fmt.Errorf("%w: redisdrv: lookup: %w", contract.ErrDriverRejected, err)
	}
	n := len(b.Names)
	for range n {
		dst = append(dst, contract.Unknown)
	}

	d.mu.Lock()
	if err := d.usableLocked("lookup"); err != nil {
		d.mu.Unlock()
		return dst[:0], err
	}
	for i, h := range p.hashes {
		if _, busy := d.writing[h]; busy {
			dst[i] = contract.InFlight
		} else {
			p.ask = append(p.ask, i)
		}
	}
	d.stats.Lookups++
	d.stats.LookupNames += int64(n)
	if len(p.ask) == 0 {
		d.mu.Unlock()
		return dst, nil
	}
	if d.lookupsInStore >= MaxLookupsInStore {
		d.stats.LookupsRefused++
		d.mu.Unlock()
		return dst, nil // Unknown for what the server was not asked
	}
	d.lookupsInStore++
	d.mu.Unlock()

	go d.runProbe(p)
	select {
	case <-p.done:
	case <-ctx.Done():
		d.mu.Lock()
		if !p.finished {
			p.abandoned = true
			d.stats.LookupsAbandoned++
			d.mu.Unlock()
			return dst, nil
		}
		d.mu.Unlock()
		<-p.done
	}
	d.answer(p, dst)
	return dst, nil
}

// buildProbe builds the batch's keys and checks them.
func (d *Driver) buildProbe(b contract.LookupBatch) (*probe, error) {
	if b.Keys == nil {
		return nil, errors.New("no key maker")
	}
	n := len(b.Names)
	p := &probe{keys: make([]string, n), hashes: make([]uint64, n), ask: make([]int, 0, n), done: make(chan struct{})}
	seen := make(map[string]int, n)
	var buf []byte
	for i, name := range b.Names {
		if len(name) == 0 {
			return nil, fmt.Errorf("name %d is empty", i)
		}
		if b.Keys.KeyLen(len(name)) == 0 {
			return nil, fmt.Errorf("name %d (%d bytes) has no key", i, len(name))
		}
		buf = b.AppendKey(buf[:0], i)
		k := string(buf)
		if j, dup := seen[k]; dup {
			return nil, fmt.Errorf("names %d and %d make one key", j, i)
		}
		seen[k] = i
		p.keys[i] = k
		p.hashes[i] = maphash.String(d.seed, k)
	}
	return p, nil
}

// runProbe makes the probe's round trip, then counts it out of the
// client and signals its end.
func (d *Driver) runProbe(p *probe) {
	var bytes int64
	for _, i := range p.ask {
		bytes += int64(len(p.keys[i]))
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.cfg.callTimeout(bytes))
	p.found = make([]contract.Presence, len(p.keys))
	groups := d.route.split(p.keys, p.ask)
	for round := 0; len(groups) > 0 && p.panic == nil; round++ {
		p.panic = d.probeGroups(ctx, p, groups)
		var reds []redirect
		for _, g := range groups {
			p.trips += g.trips
			reds = append(reds, g.redirects...)
		}
		if len(reds) == 0 || round == maxRedirects {
			break // names still redirected stay Unknown
		}
		groups = d.route.regroup(ctx, reds)
	}
	cancel()
	d.mu.Lock()
	d.stats.RoundTrips += p.trips
	if p.panic != nil {
		d.stats.Panics++
	}
	d.lookupsInStore--
	if d.lookupsInStore == 0 {
		close(d.lookupsIdle)
		d.lookupsIdle = make(chan struct{})
	}
	p.finished = true
	d.mu.Unlock()
	close(p.done)
}

// probeGroups asks each group's server, the groups at once, EXISTS key
// for each of its names in one pipeline (after ASKING for a group
// redirected by ASK), and returns once every one answered: the first
// panic recovered, if any.
func (d *Driver) probeGroups(ctx context.Context, p *probe, groups []*nodeRows) any {
	if len(groups) == 1 && groups[0].err == nil {
		return scheduler.Call(func() { d.probeOnce(ctx, p, groups[0]) })
	}
	panics := make([]any, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		if g.err != nil {
			continue // the names stay Unknown
		}
		wg.Go(func() { panics[i] = scheduler.Call(func() { d.probeOnce(ctx, p, g) }) })
	}
	wg.Wait()
	for _, pv := range panics {
		if pv != nil {
			return pv
		}
	}
	return nil
}

// probeOnce sends one group's EXISTS pipeline and records the answers:
// 1 Present, 0 Absent, MOVED and ASK as redirects, anything else
// Unknown.
func (d *Driver) probeOnce(ctx context.Context, p *probe, g *nodeRows) {
	c := g.client
	cmds := make(rueidis.Commands, 0, 2*len(g.rows))
	for _, i := range g.rows {
		if g.asking {
			cmds = append(cmds, c.B().Asking().Build())
		}
		cmds = append(cmds, c.B().Exists().Key(p.keys[i]).Build())
	}
	g.trips++
	answers := c.DoMulti(ctx, cmds...)
	for k, i := range g.rows {
		if g.asking {
			k = 2*k + 1
		}
		if k >= len(answers) {
			return
		}
		n, err := answers[k].AsInt64()
		switch {
		case err != nil:
			d.redirected(g, i, err)
		case n == 1:
			p.found[i] = contract.Present
		case n == 0:
			p.found[i] = contract.Absent
		}
	}
}

// answer writes the probe's answers into dst.
func (d *Driver) answer(p *probe, dst []contract.Presence) {
	if p.panic != nil {
		d.log.Error("redisdrv: lookup: the client panicked; the names are Unknown", "panic", p.panic)
		return
	}
	for _, i := range p.ask {
		dst[i] = p.found[i]
	}
}
